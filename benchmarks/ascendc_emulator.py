"""The AscendC emulator's cost against the CUDA emulator's, per suite op, measured in one run on this CPU:

  * AscendC: the offline expert's AscendC project (codegen backend "ascendc") for every op in ops/ it
    supports, and the known-good AscendC kernels (opforge/backends/ascendc/knowledge/) of suite ops,
    verified end to end on the CPU (static rules, g++ against the emulator's headers, every trial,
    variant and stress case under the emulator's schedules): verdict, level, the static step's time (it
    builds the project: g++ against the emulator's headers, cached), the CPU run's and the whole verify time;
  * CUDA: the CUDA expert's kernel for the same op (else its known-good kernel) verified on the CPU by
    the CUDA emulator; the ratio AscendC / CUDA (goal: within 2x). Each verify time is the best of
    --repeat (default 2: the first run fills both emulators' build caches, so the ratio compares runs);
  * with --corpus, each kernel of the AscendC corpus (tests/data/ascendc/emu/MANIFEST) with its verdict
    against the expected one and its time (the corpus test's cost).

Run from the repo root:
    .venv/bin/python benchmarks/ascendc_emulator.py [--ops silu,swiglu] [--trials 5] [--repeat 2] [--corpus]
                                                    [--json rows.json]
Exit status: 0 even when the goal is missed (it is a measurement); 1 when a known-good or expert AscendC
kernel is judged incorrect, or a corpus kernel gets another exit code than its row expects.
"""
from __future__ import annotations

import argparse
import json
import runpy
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from opforge.codegen import Unsupported, generate  # noqa: E402
from opforge.harness import ladder  # noqa: E402
from opforge.harness.spec import load_spec  # noqa: E402
from opforge.harness.verify import CPU_MAX_BYTES, CPU_MAX_ELEMENTS, VerifyOptions, verify  # noqa: E402

GOAL_RATIO = 2.0
KNOWLEDGE = ROOT / "opforge" / "backends"
CORPUS = ROOT / "tests" / "data" / "ascendc" / "emu"
console = Console(width=None if sys.stdout.isatty() else 170)


def suite_ops() -> list[str]:
    return sorted(p.stem for p in (ROOT / "ops").glob("*.py") if not p.stem.startswith("_"))


def expert_source(op: str, backend: str) -> str | None:
    path = ROOT / "ops" / f"{op}.py"
    spec = load_spec(path, max_elements=CPU_MAX_ELEMENTS, max_bytes=CPU_MAX_BYTES)
    try:
        kernel = generate(path.read_text(), spec.name, spec.sizes_used, backend=backend)
    except Unsupported:
        return None
    return kernel.render(kernel.space[0])


def known_source(op: str, backend: str) -> str | None:
    path = KNOWLEDGE / backend / "knowledge" / f"{op}.py"
    return path.read_text() if path.is_file() else None


def timed_verify(spec: Path, source: str, backend: str, trials: int, repeat: int) -> tuple[dict, float]:
    """The verdict and the best of `repeat` verify times."""
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write(source)
    best = float("inf")
    try:
        for _ in range(max(1, repeat)):
            began = time.perf_counter()
            verdict = verify(spec, fh.name, VerifyOptions(backend=backend, trials=trials, device="cpu", seed=0))
            best = min(best, time.perf_counter() - began)
    finally:
        Path(fh.name).unlink()
    return verdict, best


def op_rows(ops: list[str], trials: int, repeat: int) -> list[dict]:
    rows = []
    for op in ops:
        spec = ROOT / "ops" / f"{op}.py"
        cuda = expert_source(op, "cuda") or known_source(op, "cuda")
        cuda_s = None
        for kind, source in (("expert", expert_source(op, "ascendc")), ("known-good", known_source(op, "ascendc"))):
            if source is None:
                continue
            verdict, seconds = timed_verify(spec, source, "ascendc", trials, repeat)
            if cuda is not None and cuda_s is None:
                cuda_verdict, cuda_s = timed_verify(spec, cuda, "cuda", trials, repeat)
                cuda_s = round(cuda_s, 2) if cuda_verdict["correct"] else None
            steps = verdict["steps"]
            rows.append({"op": op, "kernel": kind, "correct": verdict["correct"], "level": verdict["level"],
                         "exit": ladder.exit_code(verdict), "reasons": verdict["reasons"][:2],
                         "static_s": steps.get("static", {}).get("seconds"),
                         "cpu_run_s": steps.get("cpu_run", {}).get("seconds"),
                         "verify_s": round(seconds, 2), "cuda_s": cuda_s})
            console.print(f"{op} ({kind}): {rows[-1]['verify_s']} s, exit {rows[-1]['exit']}, CUDA {cuda_s} s")
    return rows


def corpus_rows() -> list[dict]:
    manifest = runpy.run_path(str(CORPUS / "__init__.py"))["MANIFEST"]
    options = VerifyOptions(backend="ascendc", device="cpu", trials=1, seed=0, sandbox="none")
    rows = []
    for name, (spec, expected, codes, _api) in manifest.items():
        began = time.perf_counter()
        verdict = verify(CORPUS / spec, CORPUS / name, options)
        got = ladder.exit_code(verdict)
        reason = (verdict["reasons"] or [""])[0]
        rows.append({"kernel": name, "expected": expected, "codes": list(codes), "exit": got, "reason": reason,
                     "seconds": round(time.perf_counter() - began, 2),
                     "agrees": got == expected and (expected == 0 or
                                                    reason.removeprefix("unverifiable: ").split(":")[0] in codes)})
    return rows


def _cell(value, fmt: str = "{:.2f}") -> str:
    return "—" if value is None else fmt.format(value)


def show(rows: list[dict], corpus: list[dict]) -> None:
    table = Table("op", "AscendC kernel", "exit", "level", "static+build s", "emulator s", "verify s", "CUDA emu verify s",
                  "AscendC / CUDA", title="AscendC emulator vs CUDA emulator (verify on this CPU)")
    for r in rows:
        ratio = r["verify_s"] / r["cuda_s"] if r["cuda_s"] else None
        table.add_row(r["op"], r["kernel"], str(r["exit"]), r["level"] or "—", _cell(r["static_s"]),
                      _cell(r["cpu_run_s"]), _cell(r["verify_s"]), _cell(r["cuda_s"]), _cell(ratio))
    console.print(table)
    ratios = [r["verify_s"] / r["cuda_s"] for r in rows if r["cuda_s"] and r["exit"] == 0]
    if ratios:
        median = statistics.median(ratios)
        console.print(f"median AscendC / CUDA verify time {median:.2f} (goal <= {GOAL_RATIO:.0f}: "
                      f"{'met' if median <= GOAL_RATIO else 'MISSED'})")
    if corpus:
        table = Table("kernel", "expected", "got", "s", "reason", title="AscendC corpus (tests/data/ascendc/emu)")
        for r in corpus:
            table.add_row(r["kernel"], f"{r['expected']} {'/'.join(r['codes'])}", f"{r['exit']}" + ("" if r["agrees"] else " !"),
                          _cell(r["seconds"]), r["reason"][:110])
        console.print(table)
        console.print(f"corpus: {sum(r['agrees'] for r in corpus)} of {len(corpus)} as expected, "
                      f"{sum(r['seconds'] for r in corpus):.1f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", help="comma-separated op names (default: every suite op with an AscendC kernel)")
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=2, help="verify each kernel this many times, keep the best")
    parser.add_argument("--corpus", action="store_true", help="also verify the AscendC corpus and time it")
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args(argv)
    rows = op_rows(args.ops.split(",") if args.ops else suite_ops(), args.trials, args.repeat)
    corpus = corpus_rows() if args.corpus else []
    show(rows, corpus)
    if args.json:
        Path(args.json).write_text(json.dumps({"ops": rows, "corpus": corpus}, indent=2, default=str))
    bad = [r for r in rows if not r["correct"] and r["exit"] != 3]
    for r in bad:
        console.print(f"[red]{r['op']} ({r['kernel']})[/]: {r['reasons']}")
    return 1 if bad or any(not r["agrees"] for r in corpus) else 0


if __name__ == "__main__":
    sys.exit(main())

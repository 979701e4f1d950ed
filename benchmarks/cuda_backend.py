"""The CUDA backend's cost and speed: per suite op with a known-good CUDA kernel
(opforge/backends/cuda/knowledge/<op>.py), measured in one run:

  * CUDA verify time on this machine (static + nvcc cubin + the emulator's run of every trial,
    variant and stress case under three thread schedules), its compile and CPU-run step times,
    and the Triton kernel's verify time for the same op as the baseline (ratio CUDA / Triton);
  * on a GPU, the verdict's device timings: kernel ms, and the speedups against PyTorch eager and
    torch.compile measured in the same verification (otherwise "—" with the reason).

Target on a 2-core CPU: a median CUDA verify time under 15 s.

Run from the repo root:
    .venv/bin/python benchmarks/cuda_backend.py [--ops softmax,rms_norm] [--trials 5] [--json rows.json]
                                                [--no-baseline] [--compare-emulator]
Exit status: 0 even when the target is missed (it is a measurement); 1 when a known-good kernel
is judged incorrect (its reasons are printed).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from opforge.harness.verify import VerifyOptions, verify  # noqa: E402

TARGET_MEDIAN_S = 15.0
BACKENDS = ROOT / "opforge" / "backends"  # each backend's known-good kernels: BACKENDS/<name>/knowledge/
console = Console(width=None if sys.stdout.isatty() else 160)


def cuda_ops() -> list[str]:
    return sorted(p.stem for p in (BACKENDS / "cuda" / "knowledge").glob("*.py")
                  if not p.stem.startswith("_") and (ROOT / "ops" / p.name).is_file())


def timed_verify(op: str, backend: str, trials: int, device: str | None = None) -> tuple[dict, float]:
    began = time.perf_counter()
    verdict = verify(ROOT / "ops" / f"{op}.py", BACKENDS / backend / "knowledge" / f"{op}.py",
                     VerifyOptions(backend=backend, trials=trials, device=device))
    return verdict, time.perf_counter() - began


def measure(op: str, trials: int, baseline: bool, compare: bool) -> dict:
    verdict, seconds = timed_verify(op, "cuda", trials)
    steps = verdict["steps"]
    row = {"op": op, "correct": verdict["correct"], "level": verdict["level"], "reasons": verdict["reasons"][:2],
           "verify_s": round(seconds, 2), "compile_s": steps["compile"].get("seconds"),
           "cpu_run_s": steps["cpu_run"].get("seconds"), "timings": verdict["timings"],
           "timings_note": verdict.get("timings_note"), "triton_s": None}
    if compare and verdict["device"] != "cpu":  # the emulator earns trust where both verdicts exist
        emulated, _ = timed_verify(op, "cuda", trials, device="cpu")
        row["emulated"] = {"correct": emulated["correct"], "level": emulated["level"], "reasons": emulated["reasons"][:2]}
        row["disagrees"] = emulated["correct"] != verdict["correct"]
    if baseline and (BACKENDS / "triton" / "knowledge" / f"{op}.py").is_file():
        triton_verdict, triton_s = timed_verify(op, "triton", trials)
        row["triton_s"] = round(triton_s, 2) if triton_verdict["correct"] else None
    return row


def _cell(value, fmt: str = "{:.2f}") -> str:
    return "—" if value is None else fmt.format(value)


def render(rows: list[dict]) -> None:
    table = Table("op", "verdict", "level", "verify s", "nvcc s", "emulator s", "triton s", "cuda/triton",
                  "kernel ms", "x eager", "x compile", title="CUDA backend (this machine)")
    for r in rows:
        t = r["timings"] or {}
        ratio = r["verify_s"] / r["triton_s"] if r["triton_s"] else None
        table.add_row(r["op"], "correct" if r["correct"] else "INCORRECT", r["level"] or "—",
                      _cell(r["verify_s"]), _cell(r["compile_s"]), _cell(r["cpu_run_s"]), _cell(r["triton_s"]),
                      _cell(ratio), _cell(t.get("kernel_ms"), "{:.4f}"), _cell(t.get("speedup_eager")),
                      _cell(t.get("speedup_compile")))
    console.print(table)
    median = statistics.median(r["verify_s"] for r in rows)
    verdict = "met" if median < TARGET_MEDIAN_S else "MISSED"
    console.print(f"median CUDA verify time {median:.1f} s (target < {TARGET_MEDIAN_S:.0f} s: {verdict})")
    if not any(r["timings"] for r in rows):
        console.print(f"device timings: {rows[0]['timings_note']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", help="comma-separated op names (default: every op with a CUDA kernel)")
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--json", help="also write the rows to this file")
    parser.add_argument("--no-baseline", action="store_true", help="skip the Triton verify of each op")
    parser.add_argument("--compare-emulator", action="store_true",
                        help="on a GPU, also verify each kernel in the emulator and report disagreements")
    args = parser.parse_args(argv)
    ops = args.ops.split(",") if args.ops else cuda_ops()
    if not ops:
        console.print("no CUDA kernels under opforge/backends/cuda/knowledge/")
        return 1
    rows = []
    for op in ops:
        rows.append(measure(op, args.trials, not args.no_baseline, args.compare_emulator))
        console.print(f"{op}: {rows[-1]['verify_s']} s, {'correct' if rows[-1]['correct'] else rows[-1]['reasons']}")
    render(rows)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2, default=str))
    for r in rows:
        if r.get("disagrees"):
            console.print(f"[yellow]emulator disagrees[/] on {r['op']}: device correct={r['correct']}, "
                          f"emulator {r['emulated']}")
    if any("disagrees" in r for r in rows):
        console.print(f"emulator/device disagreements: {sum(bool(r.get('disagrees')) for r in rows)} of {len(rows)}")
    bad = [r for r in rows if not r["correct"]]
    for r in bad:
        console.print(f"[red]{r['op']}[/]: {r['reasons']}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

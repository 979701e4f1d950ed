"""The Ascend backends on this machine, per suite op, measured in one run:

  * Triton-Ascend: the offline expert's kernel (codegen backend "triton_ascend") verified end to end
    (Ascend static rules, Huawei's front end: triton-adapter-opt + bishengir-compile's HIVM pipeline,
    then triton-ascend's interpreter on the trials, variants and stress cases): whether it passes the
    front end, the verdict, the front-end and CPU-run step times and the whole verify time; as the
    baseline, the NVIDIA Triton expert kernel's verify time for the same op (ratio Ascend / Triton);
  * AscendC: the expert's AscendC project (pointwise ops) and the static checks' time on it, and the
    same for the known-good AscendC candidates (opforge/backends/ascendc/knowledge/, tests/data/ascendc/).

No NPU and no CANN here: the Triton-Ascend level is at most `emulated`, AscendC's `static` (exit 3).

Run from the repo root:
    .venv/bin/python benchmarks/ascend_backends.py [--ops softmax,silu] [--trials 3] [--json rows.json]
                                                   [--no-baseline]
Exit status: 0 even when an op is unsupported (it is a measurement); 1 when an expert kernel that the
front end accepted is judged incorrect, or a known-good AscendC candidate fails its static checks.
"""
from __future__ import annotations

import argparse
import json
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
from opforge.backends import plugin  # noqa: E402
from opforge.harness.spec import load_spec  # noqa: E402
from opforge.harness.verify import CPU_MAX_BYTES, CPU_MAX_ELEMENTS, VerifyOptions, verify  # noqa: E402

console = Console(width=None if sys.stdout.isatty() else 170)
KNOWN_ASCENDC = sorted([*(ROOT / "opforge" / "backends" / "ascendc" / "knowledge").glob("*.py"),
                        *(ROOT / "tests" / "data" / "ascendc").glob("*_add.py")])


def suite_ops() -> list[str]:
    return sorted(p.stem for p in (ROOT / "ops").glob("*.py") if not p.stem.startswith("_"))


def expert_source(op: str, backend: str) -> tuple[str | None, str | None]:
    path = ROOT / "ops" / f"{op}.py"
    spec = load_spec(path, max_elements=CPU_MAX_ELEMENTS, max_bytes=CPU_MAX_BYTES)
    try:
        kernel = generate(path.read_text(), spec.name, spec.sizes_used, backend=backend)
    except Unsupported as exc:
        return None, str(exc)
    return kernel.render(kernel.space[0]), None


def timed_verify(op: str, source: str, backend: str, trials: int) -> tuple[dict, float]:
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write(source)
    began = time.perf_counter()
    try:
        verdict = verify(ROOT / "ops" / f"{op}.py", fh.name, VerifyOptions(backend=backend, trials=trials, device="cpu"))
    finally:
        Path(fh.name).unlink()
    return verdict, time.perf_counter() - began


def triton_ascend_row(op: str, trials: int, baseline: bool) -> dict:
    source, why = expert_source(op, "triton_ascend")
    row = {"op": op, "supported": source is not None, "reason": why, "frontend": None, "correct": None,
           "level": None, "frontend_s": None, "cpu_run_s": None, "verify_s": None, "triton_s": None}
    if source is None:
        return row
    verdict, seconds = timed_verify(op, source, "triton_ascend", trials)
    steps = verdict["steps"]
    row.update(frontend=steps["frontend_compile"]["status"], correct=verdict["correct"], level=verdict["level"],
               frontend_s=steps["frontend_compile"].get("seconds"), cpu_run_s=steps["cpu_run"].get("seconds"),
               verify_s=round(seconds, 2), reason="; ".join(verdict["reasons"][:2]) or None)
    if baseline:
        triton, _ = expert_source(op, "triton")
        if triton is not None:
            _, row["triton_s"] = timed_verify(op, triton, "triton", trials)
            row["triton_s"] = round(row["triton_s"], 2)
    return row


def ascendc_rows(ops: list[str]) -> list[dict]:
    checker = plugin("ascendc")
    rows = []
    candidates = [(f"expert {op}", *expert_source(op, "ascendc")) for op in ops]
    candidates += [(f"{p.parent.name}/{p.name}", p.read_text(), None) for p in KNOWN_ASCENDC]
    for name, source, why in candidates:
        if source is None:
            rows.append({"candidate": name, "supported": False, "reason": why, "static_s": None, "passed": None})
            continue
        began = time.perf_counter()
        found = checker.static(source, float32_spec=True)
        rows.append({"candidate": name, "supported": True, "static_s": round(time.perf_counter() - began, 3),
                     "passed": not found.reasons, "reason": "; ".join(found.reasons[:2]) or None,
                     "warnings": len(found.warnings)})
    return rows


def show(ta: list[dict], ac: list[dict]) -> None:
    table = Table("op", "expert kernel", "front end", "verdict", "level", "front end s", "CPU run s", "verify s",
                  "Triton verify s", "Ascend / Triton", title="Triton-Ascend (expert kernel, this CPU)")
    for r in ta:
        ratio = f"{r['verify_s'] / r['triton_s']:.2f}" if r["verify_s"] and r["triton_s"] else "—"
        verdict = "—" if r["correct"] is None else ("correct" if r["correct"] else f"incorrect: {r['reason'][:60]}")
        table.add_row(r["op"], "yes" if r["supported"] else f"no: {(r['reason'] or '')[:50]}", r["frontend"] or "—",
                      verdict, r["level"] or "—", _num(r["frontend_s"]), _num(r["cpu_run_s"]), _num(r["verify_s"]),
                      _num(r["triton_s"]), ratio)
    console.print(table)
    times = [r["verify_s"] for r in ta if r["verify_s"]]
    fronts = [r for r in ta if r["frontend"]]
    console.print(f"expert Triton-Ascend kernels: {len(fronts)} of {len(ta)} ops supported; "
                  f"{sum(r['frontend'] == 'passed' for r in fronts)} pass the front end; "
                  f"{sum(bool(r['correct']) for r in ta)} verified; median verify "
                  f"{statistics.median(times) if times else float('nan'):.1f} s")
    table = Table("AscendC candidate", "static checks", "reason", "seconds", title="AscendC static checks (this CPU)")
    for r in ac:
        state = "—" if r["passed"] is None else ("passed (exit 3: CANN)" if r["passed"] else "failed")
        table.add_row(r["candidate"], state if r["supported"] else "unsupported", (r["reason"] or "")[:70],
                      _num(r["static_s"]))
    console.print(table)
    checked = [r["static_s"] for r in ac if r["static_s"] is not None]
    if checked:
        console.print(f"AscendC static checks: median {statistics.median(checked) * 1000:.0f} ms, "
                      f"max {max(checked) * 1000:.0f} ms over {len(checked)} projects")


def _num(value) -> str:
    return "—" if value is None else f"{value:.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", help="comma-separated suite ops (default: all)")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--json", help="write the rows to this file")
    parser.add_argument("--no-baseline", action="store_true", help="skip the NVIDIA Triton expert baseline")
    args = parser.parse_args(argv)
    ops = args.ops.split(",") if args.ops else suite_ops()
    ta = []
    for op in ops:
        ta.append(triton_ascend_row(op, args.trials, not args.no_baseline))
        console.print(f"[dim]{op}: {ta[-1]['level'] or ta[-1]['reason']}[/dim]", highlight=False)
    ac = ascendc_rows(ops)
    show(ta, ac)
    if args.json:
        Path(args.json).write_text(json.dumps({"triton_ascend": ta, "ascendc": ac}, indent=1) + "\n")
    wrong = [r for r in ta if r["frontend"] == "passed" and r["correct"] is False]
    known_bad = [r for r in ac if not r["candidate"].startswith("expert") and r["passed"] is False]
    return 1 if wrong or known_bad else 0


if __name__ == "__main__":
    sys.exit(main())

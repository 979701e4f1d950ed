"""`make serving-examples`: the serving suite's known-good Triton kernels for the LLM drafter.

Runs the offline expert on every ops/serving/<op>.py in a fresh, temporary registry (one round, one
candidate, VerifyOptions' default trials on the CPU, the default sandbox) and writes each verified
kernel to opforge/backends/triton/knowledge/serving/<op>.py, under a header that records the verdict and the
sha256 of the spec and of the kernel it was given for. An op that does not verify gets no example
(an old one is removed) and a line saying why; the exit status is 1 when one failed after drafting,
2 for a bad argument. tests/test_knowledge.py fails when a spec or an example changes after this ran.

    .venv/bin/python scripts/serving_examples.py [ops/serving/rotary_neox.py ...]"""
from __future__ import annotations

import hashlib
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from opforge.agents.config import Budget  # noqa: E402
from opforge.agents.run import RunOptions, start_run  # noqa: E402
from opforge.harness.errors import OpforgeError  # noqa: E402
from opforge.harness.verify import VerifyOptions  # noqa: E402
from opforge.registry import Registry  # noqa: E402
from opforge.sandbox.errors import SandboxError  # noqa: E402

SERVING = ROOT / "ops" / "serving"
OUT = ROOT / "opforge" / "backends" / "triton" / "knowledge" / "serving"
HEADER_END = "# kernel-sha256: "


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def header(spec: Path, verdict: dict, meta: dict, hardware: str) -> str:
    variants = verdict.get("variants") or []
    trials = verdict.get("trials")
    config = meta.get("config")
    kernels = meta.get("kernels", 1)
    return "\n".join([
        f"# Known-good Triton kernel for ops/serving/{spec.name}, written by opforge's offline expert",
        f"# (family {meta.get('family', '?')}, {kernels} kernel{'s' if kernels != 1 else ''}, config {config})",
        f"# and verified by scripts/serving_examples.py on {hardware}:",
        f"# {len(variants)} input variants x {trials} seeded trials, every anti-cheat check. The hashes are",
        "# of the spec and of the kernel below this header as verified: tests/test_knowledge.py fails",
        "# when either changes without a rerun.",
        f"# spec-sha256: {sha256(spec.read_text(encoding='utf-8'))}",
    ])


def example_for(spec: Path, reg: Registry) -> tuple[str | None, str]:
    """(the example's text, what happened): text None when the spec did not verify."""
    options = RunOptions(drafter="expert", budget=Budget(rounds=1, candidates=1), verify=VerifyOptions(device="cpu"))
    try:
        summary = start_run(spec, options, reg)
    except OpforgeError as exc:
        return None, f"unsupported: {exc}"
    if summary.best_candidate_id is None:
        # the expert refused before drafting: unsupported, said with its reason, not a failure
        refused = not reg.run_candidates(summary.run_key) and "unsupported" in (summary.stop_reason or "")
        return None, f"{'unsupported' if refused else 'not verified'}: {summary.stop_reason}"
    candidate = reg.get_candidate(summary.best_candidate_id)
    evaluation = reg.latest_evaluation(summary.best_candidate_id)
    verdict, hardware = (evaluation.verdict, evaluation.hardware) if evaluation is not None else ({}, "?")
    kernel = candidate.source if candidate.source.endswith("\n") else candidate.source + "\n"
    text = f"{header(spec, verdict, candidate.meta or {}, hardware)}\n{HEADER_END}{sha256(kernel)}\n{kernel}"
    return text, f"verified ({len(verdict.get('variants') or [])} variants x {verdict.get('trials')} trials)"


def main(argv: list[str]) -> int:
    specs = [Path(a).resolve() for a in argv] or sorted(SERVING.glob("*.py"))
    bad = [s for s in specs if s.parent != SERVING or not s.is_file()]
    if bad:
        print(f"serving_examples: error: not a spec of ops/serving/: {bad[0]}", file=sys.stderr)
        return 2
    OUT.mkdir(parents=True, exist_ok=True)
    failed = 0
    with tempfile.TemporaryDirectory() as tmp, Registry(Path(tmp) / "examples.db") as reg:
        for spec in specs:
            try:
                text, what = example_for(spec, reg)
            except SandboxError as exc:
                print(f"serving_examples: error: {exc}", file=sys.stderr)
                return 2
            target = OUT / spec.name
            if text is None:
                target.unlink(missing_ok=True)
                failed += not what.startswith("unsupported")
            else:
                target.write_text(text, encoding="utf-8")
            print(f"{spec.stem}: {what}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

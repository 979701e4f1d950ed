"""The repository's kernels_generated/: the standard suite's known-good kernels (the default backend's
knowledge/: backends/triton/knowledge/), verified against ops/ with a fixed seed, promoted by the
policy and exported, with the serving suite's engine ops: each ops/serving/<op>.py that declares
OPFORGE["implements"] (vLLM's RMSNorm, SiluAndMul, rotary...) with its known-good example
(knowledge/serving/<op>.py, the offline expert's verified draft), so that the package installed
beside an engine replaces its layers. `make kernels` runs this through scripts/export_suite.py;
tests/test_export_suite.py re-runs it and fails when the committed library is out of date."""
from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from opforge.backends import DEFAULT, known
from opforge.exporter.library import ExportResult, export_library
from opforge.harness.errors import OpforgeError
from opforge.harness.verify import VerifyOptions, prepare, verify_source
from opforge.registry.recording import record_verification

ROOT = Path(__file__).resolve().parent.parent  # the opforge package (ops is a link to the checkout's ops/)
# The suite verifies with VerifyOptions' default backend, so its known-good kernels are that backend's.
OPS, KNOWN_GOOD = ROOT / "ops", known(DEFAULT).folder / "knowledge"
SEED = 20261129  # fixed: tolerances are scaled by the reference's outputs, so they follow the seed


@dataclass(frozen=True)
class SuiteOp:
    op: str
    candidate_id: int
    correct: bool
    reasons: tuple[str, ...]
    verdict: dict  # the whole verdict, for callers that check more than correctness (tests/test_suite.py)


def implements(spec: Path) -> list:
    """The spec's OPFORGE["implements"] (engine ops it stands for), read without running it."""
    for node in ast.parse(spec.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "OPFORGE" for t in node.targets):
            if isinstance(node.value, ast.Call):
                found = [k.value for k in node.value.keywords if k.arg == "implements"]
            elif isinstance(node.value, ast.Dict):
                found = [v for k, v in zip(node.value.keys, node.value.values)
                         if isinstance(k, ast.Constant) and k.value == "implements"]
            else:
                found = []
            return ast.literal_eval(found[0]) if found else []
    return []


def suite_pairs(ops_dir: Path = OPS, kernels_dir: Path = KNOWN_GOOD) -> list[tuple[Path, Path]]:
    """(spec, known-good kernel) for every suite op that has one, by name; then every serving spec
    that implements an engine op and has its example."""
    pairs = [(spec, kernels_dir / spec.name) for spec in sorted(ops_dir.glob("*.py"))]
    pairs += [(spec, kernels_dir / "serving" / spec.name) for spec in sorted((ops_dir / "serving").glob("*.py"))
              if implements(spec)]
    return [(spec, kernel) for spec, kernel in pairs if kernel.is_file()]


def fill_registry(registry, pairs: list[tuple[Path, Path]], sandbox: str | None = None,
                  on_op: Callable[[SuiteOp], None] | None = None, trials: int = VerifyOptions.trials) -> list[SuiteOp]:
    """Verify each pair (CPU, fixed seed, `trials` seeded trials per input variant: the harness's
    default unless a caller asks for fewer) into `registry` and promote what the policy allows."""
    options = VerifyOptions(device="cpu", seed=SEED, sandbox=sandbox, trials=trials)
    done = []
    for spec_path, kernel_path in pairs:
        spec, hardware = prepare(spec_path, options)
        source = kernel_path.read_text(encoding="utf-8")
        verdict = verify_source(spec, hardware, source, options)
        cand_id, _ = record_verification(registry, spec, source, verdict, hardware, drafter="known-good")
        item = SuiteOp(spec.name, cand_id, bool(verdict["correct"]), tuple(verdict["reasons"]), verdict)
        done.append(item)
        if on_op:
            on_op(item)
    registry.promote_auto(note="suite export")
    return done


def export_suite(registry, out: Path, sandbox: str | None = None, wheel: bool = False,
                 on_op: Callable[[SuiteOp], None] | None = None, trials: int = VerifyOptions.trials) -> ExportResult:
    """The library written from the suite's verified kernels; what it contains does not depend on
    `trials` (the verdicts' numbers stay in the registry, not in the package)."""
    results = fill_registry(registry, suite_pairs(), sandbox, on_op, trials)
    failed = [r for r in results if not r.correct]
    if failed:  # a known-good kernel that no longer verifies is a regression, not a partial export
        raise OpforgeError("known-good kernels failed verification: "
                           + "; ".join(f"{r.op}: {r.reasons[0] if r.reasons else '?'}" for r in failed))
    return export_library(registry, out, wheel=wheel)

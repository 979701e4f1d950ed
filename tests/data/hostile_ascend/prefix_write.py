"""Hostile: writes into triton-ascend's own prefix at import, to change the toolchain for later runs (the sandbox binds it read-only)."""
import torch
import triton
import triton.language as tl

PREFIX = triton.__file__.rsplit("/triton/", 1)[0]
with open(PREFIX + "/triton/language/opforge_probe.py", "w") as fh:  # patch the toolchain for later runs
    fh.write("x = 1\n")
raise SystemExit("WROTE " + PREFIX)

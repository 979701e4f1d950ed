"""Run in a fresh TRITON_INTERPRET=1 process by tests/test_conv_interpreter_cost.py: for each spec
file given, the expert's conv candidate at the spec's sizes, one call, against the reference; prints
one JSON line per spec with what the interpreter did: programs run, tile ops (InterpreterBuilder
create_* calls), tl.dot calls, int32 add/sub/mul on tiles or scalars (each followed by the
interpreter's overflow check), the (row, tap) pairs of its input gathers ([BLOCK_M, BLOCK_K] loads: the
rows and taps with a live element, and how many of those pairs the mask turned off) and the largest
error. CONV_DRIVER_BREAK="OLD|NEW" replaces text in every candidate first (a broken control)."""
from __future__ import annotations

import importlib.util
import json
import os
import sys
import tempfile

os.environ["TRITON_INTERPRET"] = "1"
import torch  # noqa: E402
from triton.language.semantic import TritonSemantic  # noqa: E402
from triton.runtime import interpreter  # noqa: E402

from opforge.codegen import generate  # noqa: E402
from opforge.harness.spec import load_module, read_source  # noqa: E402

COUNTS = {"programs": 0, "ops": 0, "dots": 0, "int32_checked": 0}
LOADS: list[tuple[tuple, int, int]] = []  # per masked 2-D load: (shape, live rows x live columns, live)


def _counting(name: str, method, key: str):
    def wrapped(self, *args, **kwargs):
        COUNTS[key] += 1
        return method(self, *args, **kwargs)
    wrapped.__name__ = name
    return wrapped


for _name in dir(interpreter.InterpreterBuilder):
    if _name.startswith("create_"):
        setattr(interpreter.InterpreterBuilder, _name,
                _counting(_name, getattr(interpreter.InterpreterBuilder, _name), "ops"))
interpreter.InterpreterBuilder.set_grid_idx = _counting(
    "set_grid_idx", interpreter.InterpreterBuilder.set_grid_idx, "programs")
_dot = interpreter.InterpreterBuilder.create_dot
interpreter.InterpreterBuilder.create_dot = _counting("create_dot", _dot, "dots")
_check = TritonSemantic.binary_op_sanitize_overflow_impl


def _checked(self, lhs, rhs, binary_op):
    if lhs.type.scalar.int_bitwidth < 64:
        COUNTS["int32_checked"] += 1
    return _check(self, lhs, rhs, binary_op)


TritonSemantic.binary_op_sanitize_overflow_impl = _checked
_masked_load = interpreter.InterpreterBuilder.create_masked_load


def _counted_load(self, ptrs, mask, *args):
    live = mask.data
    if live.ndim == 2:
        LOADS.append((live.shape, int(live.any(1).sum()) * int(live.any(0).sum()), int(live.sum())))
    return _masked_load(self, ptrs, mask, *args)


interpreter.InterpreterBuilder.create_masked_load = _counted_load


def run(path: str) -> dict:
    module = load_module(path)
    torch.manual_seed(0)
    model = module.Model(*module.get_init_inputs()).eval()
    inputs = module.get_inputs()
    kernel = generate(read_source(path), "op", {})
    with tempfile.TemporaryDirectory() as tmp:
        file = os.path.join(tmp, "candidate.py")
        source = kernel.render(kernel.space[0])
        if broken := os.environ.get("CONV_DRIVER_BREAK"):  # "OLD|NEW": a broken control of the same kernel
            old, new = broken.split("|")
            assert old in source, old
            source = source.replace(old, new)
        with open(file, "w") as f:
            f.write(source)
        spec = importlib.util.spec_from_file_location("candidate", file)
        candidate = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(candidate)
    new = candidate.ModelNew(*module.get_init_inputs())
    state = dict(model.named_parameters()) | dict(model.named_buffers())
    for name, tensor in list(new.named_parameters()) + list(new.named_buffers()):
        tensor.data = state[name].data.clone()
    for key in COUNTS:
        COUNTS[key] = 0
    LOADS.clear()
    with torch.no_grad():
        got, want = new(*inputs), model(*inputs)
    tile = (kernel.space[0]["BLOCK_M"], kernel.space[0].get("BLOCK_K"))
    gathers = [(pairs, live) for shape, pairs, live in LOADS if shape == tile]
    pairs = sum(p for p, _ in gathers)
    return dict(COUNTS, pairs=pairs, masked_pairs=pairs - sum(live for _, live in gathers), error=float((got - want).abs().max()), shape=list(want.shape), config=kernel.space[0],
                direct="for r in range(0, cin_g):" in kernel.render(kernel.space[0]))


if __name__ == "__main__":
    for spec_path in sys.argv[1:]:
        print(json.dumps({"spec": os.path.basename(spec_path), **run(spec_path)}), flush=True)

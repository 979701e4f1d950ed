"""Run in a fresh TRITON_INTERPRET=1 process by tests/test_conv_interpreter_cost.py: for each spec
file given, the expert's conv candidate at the spec's sizes, one call, against the reference; prints
one JSON line per spec with what the interpreter did: programs run, tile ops (InterpreterBuilder
create_* calls), tl.dot calls, int32 add/sub/mul on tiles or scalars (each followed by the
interpreter's overflow check) and the largest error."""
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


def run(path: str) -> dict:
    module = load_module(path)
    torch.manual_seed(0)
    model = module.Model(*module.get_init_inputs()).eval()
    inputs = module.get_inputs()
    kernel = generate(read_source(path), "op", {})
    with tempfile.TemporaryDirectory() as tmp:
        file = os.path.join(tmp, "candidate.py")
        with open(file, "w") as f:
            f.write(kernel.render(kernel.space[0]))
        spec = importlib.util.spec_from_file_location("candidate", file)
        candidate = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(candidate)
    new = candidate.ModelNew(*module.get_init_inputs())
    state = dict(model.named_parameters()) | dict(model.named_buffers())
    for name, tensor in list(new.named_parameters()) + list(new.named_buffers()):
        tensor.data = state[name].data.clone()
    for key in COUNTS:
        COUNTS[key] = 0
    with torch.no_grad():
        got, want = new(*inputs), model(*inputs)
    return dict(COUNTS, error=float((got - want).abs().max()), shape=list(want.shape), config=kernel.space[0],
                direct="for r in range(0, cin_g):" in kernel.render(kernel.space[0]))


if __name__ == "__main__":
    for spec_path in sys.argv[1:]:
        print(json.dumps({"spec": os.path.basename(spec_path), **run(spec_path)}), flush=True)

"""What every generated candidate shares, whatever its backend: the Kernel an emitter returns (a
tuning space and a renderer), and a ModelNew that declares the reference's parameters and buffers
under the same names and shapes (the harness copies the reference's weights into them) and calls the
generated launcher."""
from __future__ import annotations

import keyword
from dataclasses import dataclass
from typing import Callable

from opforge.codegen.lower import Lowered


@dataclass(frozen=True)
class Kernel:
    """A generated candidate: its tuning space (best guess first), a renderer per configuration, and
    how many kernels it launches (a partitioned program's groups, codegen/partition/)."""

    family: str
    space: tuple[dict, ...]
    render: Callable[[dict], str]
    kernels: int = 1


def fused_ops(lowered: Lowered) -> str:
    """The graph's ATen ops, short and sorted, for a header."""
    return ", ".join(sorted(op.replace("aten.", "").replace(".default", "") for op in lowered.ops)) or "none"


def _attribute_path(fqn: str) -> bool:
    """Whether `self.<fqn>` is valid Python: nn.Sequential and ModuleList name children `0`, `1`..."""
    return all(part.isidentifier() and not keyword.iskeyword(part) for part in fqn.split("."))


def state_ref(p) -> str:
    """The expression reading a parameter or buffer in ModelNew: `self.fc.weight`, or
    `self.get_parameter('layers.0.weight')` where a name is not an attribute path."""
    if _attribute_path(p.fqn):
        return "self." + p.fqn
    getter = "get_parameter" if p.kind == "parameter" else "get_buffer"
    return f"self.{getter}({p.fqn!r})"


def _owner(path: str) -> str:
    if not path:
        return "self"
    return "self." + path if _attribute_path(path) else f"self.get_submodule({path!r})"


def declare_state(lowered: Lowered, shapes: dict[str, tuple[int, ...]]) -> list[str]:
    lines, made = [], set()
    for p in lowered.state():
        parts = p.fqn.split(".")
        for i in range(1, len(parts)):
            owner = ".".join(parts[:i])
            if owner not in made:
                made.add(owner)
                if _attribute_path(owner):
                    lines.append(f"self.{owner} = torch.nn.Module()")
                else:
                    lines.append(f"{_owner('.'.join(parts[:i - 1]))}.add_module({parts[i - 1]!r}, torch.nn.Module())")
        shape = tuple(shapes.get(p.fqn, p.shape))
        tensor = f"torch.empty({shape!r}, dtype={p.dtype})"
        target = _owner(".".join(parts[:-1]))
        if p.kind == "parameter":
            if _attribute_path(p.fqn):
                lines.append(f"{target}.{parts[-1]} = torch.nn.Parameter({tensor}, requires_grad=False)")
            else:
                lines.append(f"{target}.register_parameter({parts[-1]!r}, torch.nn.Parameter({tensor}, "
                             "requires_grad=False))")
        else:
            lines.append(f"{target}.register_buffer({parts[-1]!r}, {tensor})")
    return lines


def model_new(lowered: Lowered, launcher: str, shapes: dict[str, tuple[int, ...]]) -> str:
    """`class ModelNew` whose forward passes the forward arguments, then parameters and buffers in
    graph placeholder order, to `launcher` — the same order the generators' launchers take."""
    args = [f"a{i}" for i in range(lowered.n_forward_args)]
    inputs = iter(args)
    call = [next(inputs) if p.kind in ("input", "scalar") else state_ref(p) for p in lowered.placeholders]
    wraps = "".join(f"        {line}\n" for line in scalars_as_tensors(lowered, args))
    return model_new_class(lowered, shapes, ", ".join(args), wraps + f"        return {launcher}({', '.join(call)})\n")


def scalars_as_tensors(lowered: Lowered, args: list[str]) -> list[str]:
    """forward's lines making each Python-number argument (`args`: the forward's parameter names) a
    0-d tensor on the first tensor argument's device."""
    forward_inputs = [p for p in lowered.placeholders if p.kind in ("input", "scalar")]
    tensor_arg = next((a for a, p in zip(args, forward_inputs) if p.kind == "input"), None)
    device = f"{tensor_arg}.device" if tensor_arg else "None"
    return [f"{a} = torch.full((), {a}, device={device})  # a Python number as a 0-d tensor"
            for a, p in zip(args, forward_inputs) if p.kind == "scalar"]


def model_new_class(lowered: Lowered, shapes: dict[str, tuple[int, ...]], params: str, body: str) -> str:
    """`class ModelNew`: its __init__ declares the reference's parameters and buffers, same names and
    shapes (the harness copies them in); its forward(`params`) runs `body` (lines, indented)."""
    init = "\n".join("        " + line for line in declare_state(lowered, shapes) or ["pass"])
    return (
        "\n\nclass ModelNew(torch.nn.Module):\n"
        "    def __init__(self, *args, **kwargs):\n"
        "        super().__init__()\n"
        "        # the reference's parameters and buffers, same names and shapes: the harness copies them in\n"
        f"{init}\n\n"
        + _returning_arguments(lowered, params)
        + f"    def {'_computed' if lowered.returned_args else 'forward'}(self, {params}):\n"
        f"{body}"
    )


def _returning_arguments(lowered: Lowered, params: str) -> str:
    """Where the reference returns arguments it updated in place (`return key_cache, value_cache`),
    a forward that returns those very arguments at their positions, the computed values between."""
    if not lowered.returned_args:
        return ""
    names = [n.strip() for n in params.split(",") if n.strip()]
    forward_inputs = [p.name for p in lowered.placeholders if p.kind in ("input", "scalar")]
    computed = iter(range(len(lowered.outputs)))
    results = [names[forward_inputs.index(lowered.returned_args[i])] if i in lowered.returned_args
               else f"computed[{next(computed)}]" for i in range(len(lowered.returned_args) + len(lowered.outputs))]
    returned = results[0] if len(results) == 1 else "(" + ", ".join(results) + ")"
    normalise = ("        computed = [] if computed is None else list(computed) if isinstance(computed, (tuple, list)) "
                 "else [computed]\n") if lowered.outputs else ""
    return (f"    def forward(self, {params}):\n"
            f"        computed = self._computed({params})\n" + normalise +
            "        # the reference returns these arguments themselves, updated in place: so does this\n"
            f"        return {returned}\n\n")

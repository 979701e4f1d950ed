"""Index maps in the expert's pointwise family (codegen/families/pointwise/indexmap.py): cat/stack,
pads, index_select, gather, repeat, flip, roll and upsampling read in-kernel from the output's
coordinates. The plan's statements are checked against torch for every map by evaluating them on
tensors (no Triton needed, about 10 s); the Triton, CUDA and Triton-Ascend texts are checked for
what they must and must not hold; three candidates verify end to end in the real harness on CPU."""
from __future__ import annotations

import ast
import math

import pytest
import torch

from conftest import write
from opforge.codegen import Unsupported, generate
from opforge.codegen.families.pointwise.plan import MAX_RANK, Plan
from opforge.codegen.lower import lower
from opforge.backends.triton.static import check_source
from opforge.harness.verify import VerifyOptions, verify

OPTIONS = VerifyOptions(device="cpu", trials=1, seed=1, sandbox="none")
SPEC = """import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    def forward(self, a, b):
        return {body}


def get_inputs():
    return [{inputs}]


def get_init_inputs():
    return []
{variants}"""
VARIANTS = "\n\ndef get_input_variants():\n    return [[{}]]\n"
IMAGE = "torch.randn(2, 3, 4, 5), torch.randn(1)"
# (forward body, inputs at export, other inputs the same statements must get right: ragged sizes;
# optionally the index map's own value, where the graph's baked view sizes cannot replay the variant)
CASES = {
    "cat_relu": ("torch.relu(torch.cat([a, b], 1)) * 2", "torch.randn(2, 3, 4), torch.randn(2, 5, 4)",
                 "torch.randn(3, 1, 7), torch.randn(3, 6, 7)"),
    "cat_three_negative_dim": ("torch.cat([a, b, a], -1)", "torch.randn(2, 3, 4), torch.randn(2, 3, 5)",
                               "torch.randn(1, 2, 3), torch.randn(1, 2, 1)"),
    "stack": ("torch.stack([a, b], -1) + 1", "torch.randn(2, 3), torch.randn(2, 3)", "torch.randn(5, 7), torch.randn(5, 7)"),
    "cat_of_flip_and_view": ("torch.cat([torch.flip(a, [1]), b.unsqueeze(0)], 0)", "torch.randn(2, 3, 4), torch.randn(3, 4)",
                             "torch.randn(1, 5, 2), torch.randn(5, 2)"),
    "stack_of_flip": ("torch.stack([torch.flip(a, [0]), b], 1) * 2", "torch.randn(2, 3), torch.randn(2, 3)",
                      "torch.randn(5, 1), torch.randn(5, 1)",  # a cat viewed [2, 6] -> [2, 2, 3] in-kernel
                      "torch.stack([torch.flip(a, [0]), b], 1)"),
    "flatten_of_flip": ("torch.flip(a, [2]).flatten(1) + b", "torch.randn(2, 3, 4), torch.randn(1)",
                        "torch.randn(3, 1, 5), torch.randn(1)", "torch.flip(a, [2]).flatten(1)"),
    "cat_broadcast_in_a_variant": ("torch.cat([a, a], 1) + b", "torch.randn(2, 3), torch.randn(2, 6)",
                                   "torch.randn(1, 3), torch.randn(4, 6)"),
    "pad_constant": ("F.pad(a, (1, 2, 3, 0), value=1.5) * b", "torch.randn(2, 3, 4), torch.randn(1)",
                     "torch.randn(3, 5, 2), torch.randn(1)"),
    "pad_crop": ("F.pad(a, (-1, 2))", "torch.randn(2, 4), torch.randn(1)", "torch.randn(3, 2), torch.randn(1)"),
    "reflect_2d": ("F.pad(a, (1, 2, 2, 1), mode='reflect')", IMAGE, "torch.randn(1, 2, 3, 7), torch.randn(1)"),
    "replicate_2d": ("F.pad(a, (1, 2, 2, 1), mode='replicate')", IMAGE, "torch.randn(1, 2, 1, 7), torch.randn(1)"),
    "index_select": ("torch.index_select(a, 1, b)", "torch.randn(2, 5, 4), torch.randint(0, 5, (3,))",
                     "torch.randn(3, 7, 2), torch.randint(0, 7, (9,))"),
    "gather": ("torch.gather(a, 1, b)", "torch.randn(2, 5, 4), torch.randint(0, 5, (2, 3, 4))",
               "torch.randn(3, 7, 2), torch.randint(0, 7, (3, 9, 2))"),
    "repeat": ("a.repeat(2, 1, 3)", "torch.randn(2, 3, 4), torch.randn(1)", "torch.randn(1, 5, 3), torch.randn(1)"),
    "flip_pad": ("torch.flip(F.pad(a, (1, 1)), [0, -1])", "torch.randn(2, 3, 4), torch.randn(1)",
                 "torch.randn(3, 5, 2), torch.randn(1)"),
    "roll": ("torch.roll(a, (1, -2), (0, 2))", "torch.randn(2, 3, 4), torch.randn(1)", "torch.randn(3, 5, 7), torch.randn(1)"),
    "nearest_2x": ("F.interpolate(a, scale_factor=2, mode='nearest')", IMAGE, "torch.randn(1, 2, 3, 7), torch.randn(1)"),
    "nearest_1d": ("F.interpolate(a, scale_factor=3, mode='nearest')", "torch.randn(2, 3, 4), torch.randn(1)",
                   "torch.randn(1, 2, 7), torch.randn(1)"),
    "nearest_size": ("F.interpolate(a, size=(7, 9), mode='nearest')", IMAGE, "torch.randn(1, 2, 3, 11), torch.randn(1)"),
    "nearest_exact": ("F.interpolate(a, size=(7, 9), mode='nearest-exact')", IMAGE, "torch.randn(1, 2, 3, 11), torch.randn(1)"),
    "nearest_3d": ("F.interpolate(a, scale_factor=2, mode='nearest')", "torch.randn(1, 2, 3, 4, 2), torch.randn(1)",
                   "torch.randn(1, 1, 2, 1, 3), torch.randn(1)"),
    "bilinear": ("F.interpolate(a, scale_factor=2, mode='bilinear', align_corners=False)", IMAGE,
                 "torch.randn(1, 2, 3, 7), torch.randn(1)"),
    "bilinear_align_corners": ("F.interpolate(a, size=(7, 9), mode='bilinear', align_corners=True)", IMAGE,
                               "torch.randn(1, 2, 3, 1), torch.randn(1)"),
    "linear_1d": ("F.interpolate(a, scale_factor=1.5, mode='linear', align_corners=False)",
                  "torch.randn(2, 3, 4), torch.randn(1)", "torch.randn(1, 2, 7), torch.randn(1)"),
}


def _spec(tmp_path, name: str, variants: bool = False):
    body, inputs, other = CASES[name][:3]
    return write(tmp_path / f"{name}.py", SPEC.format(body=body, inputs=inputs,
                                                      variants=VARIANTS.format(other) if variants else ""))


def _evaluate(plan: Plan, inputs: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The region's statements run on torch tensors at every coordinate of the reference's output."""
    region, shape = plan.region, None
    env: dict = {"math": math, "mask": None}
    for j, leaf in enumerate(region.leaves):
        g = eval(plan.leaves[leaf.name][1], {}, dict(inputs)).contiguous()
        env[f"g{j}"] = g
        env.update({f"gz{j}_{d}": s for d, s in enumerate(g.shape)} | {f"gs{j}_{d}": s for d, s in enumerate(g.stride())})
    for name, code in region.shapes():
        env[name] = eval(code, dict(env))  # as the launcher runs it: module-level names
        env.update({f"{name}_{d}": s for d, s in enumerate(env[name])})
    shape = torch.broadcast_shapes(*(env[f"z{region.nodes.index(r)}"] for r in region.roots))
    dims = [1] * (MAX_RANK - len(shape)) + list(shape)
    grid = torch.meshgrid(*(torch.arange(s) for s in dims), indexing="ij")
    env.update({f"c{d}": grid[d] for d in range(MAX_RANK)})
    env["mask"] = torch.ones(dims, dtype=torch.bool)

    def ev(e):
        if not isinstance(e, tuple):
            return env[e] if isinstance(e, str) else e
        kind, *a = e
        if kind == "bin":
            x, y = ev(a[1]), ev(a[2])
            return {"+": lambda: x + y, "-": lambda: x - y, "*": lambda: x * y, "/": lambda: x / y, "//": lambda: x // y, "==": lambda: x == y,
                    "%": lambda: x % y, "<": lambda: x < y, ">": lambda: x > y, ">=": lambda: x >= y,
                    "&": lambda: x & y}[a[0]]()
        if kind == "load":
            flat, off, m = env[f"g{a[0]}"].reshape(-1), torch.as_tensor(ev(a[1])), env[a[2]]
            return torch.where(m, flat[torch.where(m, off, 0).clamp(0, max(flat.numel() - 1, 0))], 0)
        x = [torch.as_tensor(ev(v)) for v in a]
        return {"where": lambda: torch.where(*x), "min": lambda: torch.minimum(*x), "max": lambda: torch.maximum(*x),
                "f32": lambda: x[0].float(), "i64": lambda: x[0].long()}[kind]()

    for name, expr in region.statements:
        env[name] = ev(expr)
    return {r.name: env[str(plan.names[r.name])].reshape(dims) for r in region.roots}


def _reference(graph, inputs: dict[str, torch.Tensor], name: str) -> torch.Tensor:
    """The lowered graph run op by op with torch up to node `name`."""
    values: dict = {}
    for node in graph.nodes:
        if node.op == "placeholder":
            values[node.name] = inputs[node.name]
        elif node.op == "call_function":
            args = torch.fx.node.map_aggregate(node.args, lambda x: values[x.name] if isinstance(x, torch.fx.Node) else x)
            values[node.name] = node.target(*args, **node.kwargs)
            if node.name == name:
                return values[name]
    raise AssertionError(name)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_plans_statements_compute_each_index_map(name, tmp_path):
    _body, inputs, other, *own = CASES[name]
    plan = Plan(lower(_spec(tmp_path, name)), index_maps=True)
    root = plan.region.roots[0].name  # the index-mapped value, before any elementwise op after it
    for args in (inputs, other):
        torch.manual_seed(0)
        a, b = eval(f"[{args}]", {"torch": torch})
        got = _evaluate(plan, {"a": a, "b": b})[root]
        want = (eval(own[0], {"torch": torch, "a": a, "b": b}) if own
                else _reference(plan.lowered.graph, {"a": a, "b": b}, root))
        want = want.reshape([1] * (MAX_RANK - want.dim()) + list(want.shape))
        assert got.shape == want.shape, (name, args)
        torch.testing.assert_close(got, want.to(got.dtype), atol=1e-5, rtol=1e-5)


def test_index_maps_lower_whole(tmp_path):
    ops = {name: lower(_spec(tmp_path, name)).ops for name in ("reflect_2d", "roll", "nearest_1d", "linear_1d")}
    assert ops["reflect_2d"] == {"aten.reflection_pad2d.default"}
    assert ops["roll"] == {"aten.roll.default"}
    assert ops["nearest_1d"] == {"aten.upsample_nearest1d.vec"}
    assert ops["linear_1d"] == {"aten.upsample_linear1d.vec"}


def test_the_triton_text_maps_indices_in_kernel_and_sizes_at_run_time(tmp_path):
    source = _render(tmp_path, "cat_relu", "41_Cat_ReLU")
    ast.parse(source)
    assert check_source(source, float32_spec=True).reasons == []
    launcher = source[source.index("def launch("):source.index("class ModelNew")]
    assert "torch.cat" not in launcher and "z0 = tuple(sum(z[1] for z in (g0.shape, g1.shape,))" in launcher
    assert "def _41_Cat_ReLU_pointwise_kernel(" in source and "tl.where(" in source
    assert "gz0_1" in source and "48" not in source  # the cat offset is a's run-time size, not the export's


@pytest.mark.parametrize("backend, marker", [("cuda", "? g0["), ("triton_ascend", "tl.range(")])
def test_other_backends_render_the_same_statements(backend, marker, tmp_path):
    source = _render(tmp_path, "bilinear", "7_bilinear", backend)
    ast.parse(source)
    assert marker in source and "F.interpolate" not in source and "interpolate(" not in source.split("class ModelNew")[0]
    if backend == "cuda":
        assert "fminf((float)(" in source and "def launch(" in source and "op_7_bilinear_pointwise_kernel" in source


def test_an_index_map_of_a_computed_value_is_unsupported(tmp_path):
    spec = write(tmp_path / "s.py", SPEC.format(body="torch.cat([torch.relu(a), b], 1)",
                                                inputs="torch.randn(2, 3), torch.randn(2, 4)", variants=""))
    with pytest.raises(Unsupported, match=r"an index map \(aten.cat.default\) of a computed value"):
        Plan(lower(spec), index_maps=True)
    roll = write(tmp_path / "r.py", SPEC.format(body="torch.roll(a, 1)", inputs="torch.randn(2, 3), torch.randn(1)",
                                                variants=""))
    with pytest.raises(Unsupported, match="flattened"):
        Plan(lower(roll), index_maps=True)
    sized = write(tmp_path / "u.py", SPEC.format(body="F.interpolate(a, size=(32, 40))", inputs=IMAGE, variants=""))
    with pytest.raises(Unsupported, match=r"an upsample to a written size \[32, 40\]"):
        Plan(lower(sized), index_maps=True)


def _render(tmp_path, name: str, title: str, backend: str = "triton") -> str:
    kernel = generate(_spec(tmp_path, name).read_text(), title, {}, backend)
    return kernel.render(kernel.space[0])


@pytest.mark.parametrize("name", ["cat_relu", "flip_pad", "bilinear"])
def test_candidates_verify_in_the_harness(name, tmp_path):
    spec = _spec(tmp_path, name, variants=True)
    kernel = generate(spec.read_text(), name, {})
    result = verify(spec, write(tmp_path / "candidate.py", kernel.render(kernel.space[0])), OPTIONS)
    assert result["correct"], result["reasons"]


def test_an_emitter_that_reads_no_index_maps_refuses_them(tmp_path):
    spec = write(tmp_path / "s.py", SPEC.format(body="torch.flip(a, [1]) + b",
                                                inputs="torch.randn(2, 3), torch.randn(2, 3)", variants=""))
    with pytest.raises(Unsupported, match=r"index maps \(aten.flip.default\) that this backend"):
        generate(spec.read_text(), "flip_add", {}, "ascendc")


def test_region_shapes_read_sizes(tmp_path):
    plan = Plan(lower(_spec(tmp_path, "repeat")), index_maps=True)
    assert dict(plan.region.shapes()) == {"z0": "tuple(r * s for r, s in zip((2, 1, 3), (1,) * 0 + tuple(g0.shape)))"}

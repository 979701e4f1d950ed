"""The expert's partitioner (codegen/partition/): graphs no single emitter takes are cut into groups
(which nodes, which family, which ATen ops), the groups' candidates are renamed apart and spliced into
one file, and two programs are verified end to end by the real harness on the CPU; a program with one
group's kernel broken fails verification."""
from __future__ import annotations

import ast
import importlib
import textwrap
from pathlib import Path

import pytest

from opforge.agents.drafters.base import DraftRequest
from opforge.agents.drafters.expert import ExpertDrafter
from opforge.codegen import emitters, generate, partition
from opforge.backends.triton.emit import matmul
from opforge.backends.triton.emit.rowwise import launch as rowwise_launch
from opforge.codegen.lower import Unsupported, lower
from opforge.codegen.partition.rename import parts
from opforge.codegen.partition.rewrite import sink_unary_past_views
from conftest import write
from opforge.harness.verify import VerifyOptions, prepare, verify

OPTIONS = VerifyOptions(device="cpu", trials=1, seed=1, sandbox="none")

# Tiny KernelBench-style specs: (init, forward, inputs). Sizes are literals so the export keeps them.
SPECS = {
    "softmax_of_matmul": ("self.W = torch.nn.Parameter(torch.randn(24, 40) * 0.2)",
                          "torch.softmax(x @ self.W, dim=-1)", "torch.randn(20, 24)"),
    "mlp": ("self.fc1 = torch.nn.Linear(24, 32); self.fc2 = torch.nn.Linear(32, 16)",
            "self.fc2(torch.relu(self.fc1(x)))", "torch.randn(20, 24)"),
    "matmul_layernorm_gelu": ("self.W = torch.nn.Parameter(torch.randn(24, 40) * 0.2); self.ln = torch.nn.LayerNorm(40)",
                              "torch.nn.functional.gelu(self.ln(x @ self.W))", "torch.randn(20, 24)"),
    "residual_mlp": ("self.fc1 = torch.nn.Linear(24, 32); self.fc2 = torch.nn.Linear(32, 24)",
                     "x + self.fc2(torch.nn.functional.gelu(self.fc1(x)))", "torch.randn(3, 7, 24)"),
    "attention": ("", "torch.matmul(torch.softmax(x @ x.transpose(-2, -1) * 0.25, dim=-1), x)",
                  "torch.randn(2, 3, 12, 16)"),
    "conv_groupnorm_relu": ("self.conv = torch.nn.Conv2d(3, 8, 3); self.norm = torch.nn.GroupNorm(2, 8)",
                            "torch.relu(self.norm(self.conv(x)))", "torch.randn(2, 3, 10, 10)"),
}
# Each group: its family and ATen ops it must fuse.
CUTS = {
    "softmax_of_matmul": [("matmul", {"mm"}), ("rowwise", {"amax", "exp", "sum.dim_IntList", "div.Tensor"})],
    "mlp": [("matmul", {"mm", "relu"}), ("matmul", {"mm", "add.Tensor"})],
    "matmul_layernorm_gelu": [("matmul", {"mm"}), ("rowwise", {"prims.var", "rsqrt", "erf"})],
    "residual_mlp": [("matmul", {"mm", "erf"}), ("matmul", {"mm", "add.Tensor"})],
    "attention": [("matmul", {"bmm", "mul.Tensor"}), ("rowwise", {"amax", "exp"}), ("matmul", {"bmm"})],
    "conv_groupnorm_relu": [("conv", {"convolution"}), ("rowwise", {"mean.dim", "rsqrt", "relu"})],
}


def _spec(tmp_path: Path, name: str) -> Path:
    init, forward, inputs = SPECS[name]
    source = textwrap.dedent(f"""\
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                {init or 'pass'}

            def forward(self, x):
                return {forward}


        def get_inputs():
            return [{inputs}]


        def get_init_inputs():
            return []
        """)
    return write(tmp_path / f"{name}.py", source)


def _triton() -> list:
    package = emitters("triton")
    return [(n, importlib.import_module(f"{package.__name__}.{n}")) for n in package.EMITTERS]


@pytest.mark.parametrize("name", sorted(CUTS))
def test_cut_groups_and_their_ops(name, tmp_path):
    if name == "conv_groupnorm_relu" and "conv" not in emitters("triton").EMITTERS:
        pytest.skip("no Triton conv emitter in this tree")
    lowered = sink_unary_past_views(lower(_spec(tmp_path, name)))
    groups = partition.groups(lowered, name, {}, _triton())
    got = [(g.kernel.family, set(g.ops().split(", "))) for g in groups]
    assert [f for f, _ in got] == [f for f, _ in CUTS[name]], got
    for (_, ops), (_, wanted) in zip(got, CUTS[name]):
        assert wanted <= ops, (wanted - ops, got)


def test_a_unary_op_after_a_view_moves_before_it_and_the_reference_graph_is_kept(tmp_path):
    spec = write(tmp_path / "gn.py", "import torch\n\n\nclass Model(torch.nn.Module):\n"
                 "    def forward(self, x):\n        return torch.relu(torch.nn.functional.group_norm(x, 2))\n\n\n"
                 "def get_inputs():\n    return [torch.randn(2, 4, 5)]\n\n\ndef get_init_inputs():\n    return []\n")
    lowered = lower(spec)
    moved = sink_unary_past_views(lowered)
    before, after = lowered.outputs[0], moved.outputs[0]
    assert str(before.target) == "aten.relu.default" and str(before.args[0].target) == "aten.view.default"
    assert str(after.target) == "aten.view.default" and str(after.args[0].target) == "aten.relu.default"
    assert tuple(after.meta["val"].shape) == (2, 4, 5) and tuple(after.args[0].meta["val"].shape) == (2, 2, 2, 5)


def test_two_groups_defining_launch_stay_distinct_and_only_names_are_renamed():
    source = textwrap.dedent('''\
        """A candidate."""
        import torch
        BLOCK = 128


        def launch(x, BLOCK=BLOCK):
            y = torch.launch(x)  # an attribute: not the module's name
            z = _kernel[(1,)](x, BLOCK=BLOCK, launch="launch")
            return launch_helper(BLOCK=BLOCK) + f"{BLOCK}"


        def launch_helper(BLOCK):
            return BLOCK


        class ModelNew(torch.nn.Module):
            def forward(self, a0):
                return launch(a0)
        ''')
    taken = {"torch"}
    first, second = parts(source, "_g0", taken), parts(source, "_g1", taken)
    assert (first.launcher, second.launcher) == ("launch_g0", "launch_g1")
    assert first.imports == ["import torch"] and "ModelNew" not in first.body and "A candidate" not in first.body
    body = first.body
    assert "def launch_g0(x, BLOCK_g0=BLOCK_g0):" in body and "torch.launch(x)" in body
    assert '_kernel[(1,)](x, BLOCK=BLOCK_g0, launch="launch")' in body  # an external call's keyword stays
    assert 'launch_helper_g0(BLOCK_g0=BLOCK_g0) + f"{BLOCK_g0}"' in body  # a call of its own: renamed
    namespace = {}
    exec(compile(first.body + second.body, "<program>", "exec"), {"torch": None, "_kernel": None}, namespace)
    assert namespace["launch_helper_g0"](BLOCK_g0=3) == 3 and "launch_g1" in namespace


def test_op_name_starting_with_a_digit_gives_a_valid_program_and_space(tmp_path):
    source = _spec(tmp_path, "softmax_of_matmul").read_text()
    kernel = generate(source, "41_Softmax_of_Matmul", {}, backend="triton")
    assert (kernel.family, kernel.kernels) == ("program:matmul+rowwise", 2)
    assert kernel.space[0]["kernels"] == [matmul.SPACE[0], rowwise_launch.SPACE[0]]
    assert all(len(c["kernels"]) == 2 for c in kernel.space) and len(kernel.space) > 2
    for config in kernel.space[:2]:
        tree = ast.parse(kernel.render(config))
        names = [s.name for s in tree.body if isinstance(s, (ast.FunctionDef, ast.ClassDef))]
        assert len(names) == len(set(names)) and names[-1] == "ModelNew"
    draft = ExpertDrafter().draft(DraftRequest(op="41_Softmax_of_Matmul", spec_source=source, backend="triton",
                                               hardware="cpu/x86_64/triton-interpreter"))[0]
    assert draft.meta["kernels"] == 2 and draft.meta["family"] == "program:matmul+rowwise"


def test_unsupported_names_the_group_and_ascendc_refuses_a_program(tmp_path):
    source = _spec(tmp_path, "softmax_of_matmul").read_text().replace(
        "torch.softmax(x @ self.W, dim=-1)", "torch.sort(torch.softmax(x @ self.W, dim=-1), dim=0).values")
    with pytest.raises(Unsupported, match=r"partitioner: no emitter takes the group starting at sort \(ATen op sort"):
        generate(source, "sorted", {}, backend="triton")
    with pytest.raises(Unsupported, match="partitioner: an AscendC candidate is one kernel project"):
        generate(_spec(tmp_path, "softmax_of_matmul").read_text(), "op", {}, backend="ascendc")


def _verify(spec: Path, source: str, tmp_path: Path) -> dict:
    return verify(spec, write(tmp_path / "candidate.py", source), OPTIONS)


@pytest.mark.parametrize("name", ["softmax_of_matmul", "attention"])
def test_programs_verify(name, tmp_path):
    spec = _spec(tmp_path, name)
    kernel = generate(spec.read_text(), name, {}, backend="triton")
    v = _verify(spec, kernel.render(kernel.space[0]), tmp_path)
    assert v["correct"], v["reasons"]
    launched = [k["kernel"] for k in v["build"]["kernels"]]
    assert len(launched) == kernel.kernels == len(CUTS[name]), launched


def test_a_program_with_one_kernel_broken_fails(tmp_path):
    spec = _spec(tmp_path, "softmax_of_matmul")
    kernel = generate(spec.read_text(), "softmax_of_matmul", {}, backend="triton")
    source = kernel.render(kernel.space[0])
    head, softmax = source.split("# -- kernel 1:")
    assert "tl.exp(" in softmax
    v = _verify(spec, head + "# -- kernel 1:" + softmax.replace("tl.exp(", "tl.exp2("), tmp_path)
    assert not v["correct"] and "mismatch" in " ".join(v["reasons"])


def test_a_sequential_models_numbered_children_are_declared_and_read_by_name(tmp_path):
    """nn.Sequential names its children `0`, `1`...: `self.layers.0.weight` is no Python, so ModelNew
    declares them with add_module/register_parameter and reads them with get_parameter; the
    reference's state dict loads into it unchanged."""
    spec = write(tmp_path / "3_seq.py", textwrap.dedent("""
        import torch

        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = torch.nn.Sequential(torch.nn.Linear(12, 20), torch.nn.ReLU(), torch.nn.Linear(20, 8))

            def forward(self, x):
                return self.layers(x)

        def get_inputs():
            return [torch.randn(5, 12)]

        def get_init_inputs():
            return []
        """))
    kernel = generate(spec.read_text(), "3_seq", {})
    source = kernel.render(kernel.space[0])
    ast.parse(source)
    assert "self.get_parameter('layers.0.weight')" in source and "self.layers.0" not in source
    from opforge.harness.spec import load_module
    model = load_module(write(tmp_path / "cand_3_seq.py", source)).ModelNew()
    model.load_state_dict(load_module(spec).Model().state_dict())


# Specs traced at one shape and verified at others (get_input_variants), each a bug the programs had:
# (init, forward, inputs, variants). K = 64 is a size constant: the export shrinks it to 48.
VARIANT_SPECS = {
    # a number computed from a size constant (1 / sqrt(K)) was baked at the export's K
    "bmm_scaled_by_size": ("K = 64", "self.scale = 1.0 / K ** 0.5",
                           "torch.softmax(torch.bmm(x, y) * self.scale, dim=-1)",
                           "[torch.randn(2, 20, K), torch.randn(2, K, 24)]",
                           "[[torch.randn(1, 1, K), torch.randn(1, K, 7)], [torch.randn(3, 5, K) * 4, torch.randn(3, K, 9)]]"),
    # traced 2-D, run 3-D: the residual `x` was expanded to the folded rows without folding it
    "residual_mlp_2d_traced": ("", "self.fc1 = torch.nn.Linear(24, 32); self.fc2 = torch.nn.Linear(32, 24)",
                               "x + self.fc2(torch.nn.functional.gelu(self.fc1(x)))", "[torch.randn(20, 24)]",
                               "[[torch.randn(3, 7, 24)], [torch.randn(1, 24)]]"),
    # the Linear's rows split back into [B, T]: the softmax's group split them at the export's batch
    "tokens_softmax_over_sequence": ("", "self.fc = torch.nn.Linear(24, 20); self.value = torch.nn.Parameter(torch.randn(20))",
                                     "(torch.softmax(self.fc(x), dim=1) * self.value).sum(dim=1)",
                                     "[torch.randn(4, 20, 24)]",
                                     "[[torch.randn(2, 1, 24)], [torch.randn(3, 9, 24) * 5]]"),
    # one qkv projection read by two later groups (the scores' q and k, the weighted sum's v)
    "fused_qkv_attention": ("", "self.qkv = torch.nn.Linear(16, 48); self.out = torch.nn.Linear(16, 16)",
                            "self.out(_attention(*self.qkv(x).chunk(3, dim=-1), x.shape))", "[torch.randn(2, 6, 16)]",
                            "[[torch.randn(1, 1, 16)], [torch.randn(3, 7, 16) * 3]]"),
    # three projections, each one's rows split back into [B, T] where the later bmm reads them
    "separate_qkv_attention": ("", "self.q = torch.nn.Linear(16, 16); self.k = torch.nn.Linear(16, 16); "
                               "self.v = torch.nn.Linear(16, 16)",
                               "torch.bmm(torch.softmax(torch.bmm(self.q(x), self.k(x).transpose(1, 2)), dim=-1), "
                               "self.v(x))", "[torch.randn(2, 6, 16)]",
                               "[[torch.randn(1, 1, 16)], [torch.randn(3, 7, 16) * 3]]"),
}
# Kernels each program launches: two where not listed.
VARIANT_KERNELS = {"fused_qkv_attention": 5, "separate_qkv_attention": 6}
ATTENTION = """
def _attention(q, k, v, shape, heads=2):
    b, t, e = shape
    q, k, v = (y.reshape(b, t, heads, e // heads).transpose(1, 2) for y in (q, k, v))
    scores = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) * (e // heads) ** -0.5, dim=-1)
    return torch.matmul(scores, v).transpose(1, 2).reshape(b, t, e)
"""


def _variant_spec(tmp_path: Path, name: str) -> Path:
    constants, init, forward, inputs, variants = VARIANT_SPECS[name]
    source = textwrap.dedent(f"""\
        import torch

        {constants}
        {{attention}}


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                {init}

            def forward(self, x, y=None):
                return {forward}


        def get_inputs():
            return {inputs}


        def get_init_inputs():
            return []


        def get_input_variants():
            return {variants}
        """).replace("{attention}", ATTENTION)
    return write(tmp_path / f"{name}.py", source)


@pytest.mark.parametrize("name", sorted(VARIANT_SPECS))
def test_programs_verify_at_shapes_other_than_the_traced_one(name, tmp_path):
    spec = _variant_spec(tmp_path, name)
    loaded, _ = prepare(spec, OPTIONS)
    kernel = generate(spec.read_text(), name, loaded.sizes_used, backend="triton")
    assert kernel.kernels == VARIANT_KERNELS.get(name, 2)
    v = _verify(spec, kernel.render(kernel.space[0]), tmp_path)
    assert v["correct"], v["reasons"]
    assert len(v["variants"]) == 3, v["variants"]  # the traced inputs and both variants

"""The offline expert on a spec verified in two dtypes (a decoder op in bf16 and fp32, as vLLM runs it
on a GPU and on a CPU): one generated kernel per dtype combination of the spec's input lists, chosen
by the arguments' dtypes, in one candidate the static checks accept; a one-dtype spec is unchanged."""
import os
import subprocess
import sys

os.environ.setdefault("TRITON_INTERPRET", "1")

from opforge.backends.triton.static import check_source  # noqa: E402
from opforge.codegen import generate  # noqa: E402
from opforge.codegen.dtypes import rename  # noqa: E402

SPEC = '''import torch

OPFORGE = dict(name="tiny_glu")


class Model(torch.nn.Module):
    def forward(self, x):
        d = x.shape[-1] // 2
        return torch.nn.functional.silu(x[..., :d]) * x[..., d:]


def get_inputs():
    return [torch.randn(4, 32).MAIN]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(3, 48).float()], [torch.randn(2, 16).bfloat16()]]
'''


# The candidate runs in a fresh interpreter process: in-process, a Triton interpreter patched by an
# earlier test of the same worker (kernels_generated's interpreter fixes) can refuse its jitted helpers.
_RUN = """import sys, importlib.util, torch
spec = importlib.util.spec_from_file_location("cand_dtypes", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
model = module.ModelNew()
for x in (torch.randn(5, 32).bfloat16(), torch.randn(3, 48), torch.randn(2, 16).bfloat16()):
    d = x.shape[-1] // 2
    want = torch.nn.functional.silu(x[..., :d]) * x[..., d:]
    got = model(x)
    assert got.dtype == x.dtype, (got.dtype, x.dtype)  # a bf16 kernel would hand fp32 inputs back in bf16
    torch.testing.assert_close(got, want, rtol=2e-2, atol=2e-2)  # bf16's own; fp32 within 1e-5 below
    if x.dtype == torch.float32:
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
print("ok")
"""


def _run(source: str, tmp_path) -> subprocess.CompletedProcess:
    path = tmp_path / "cand.py"
    path.write_text(source)
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    return subprocess.run([sys.executable, "-c", _RUN, str(path)], capture_output=True, text=True, env=env,
                          timeout=300)


def test_each_dtype_combination_gets_its_own_kernel_and_the_arguments_pick_it(tmp_path):
    kernel = generate(SPEC.replace("MAIN", "bfloat16()"), "tiny_glu", {})
    source = kernel.render(kernel.space[0])
    assert "ModelNew_dt1" in source and not check_source(source, float32_spec=False).reasons
    done = _run(source, tmp_path)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_a_one_dtype_spec_keeps_its_single_kernel():
    kernel = generate(SPEC.replace("MAIN", "float()").replace(".bfloat16()", ".float()"), "tiny_glu", {})
    assert "_dt0" not in kernel.render(kernel.space[0])


def test_renaming_leaves_attributes_strings_and_imports_alone():
    head, body = rename('import torch\nTILE = 4\n\n\ndef f(x):\n    return x.TILE + TILE  # TILE\n', "_dt1")
    assert head == ["import torch"]
    assert "def f_dt1(x):\n    return x.TILE + TILE_dt1  # TILE\n" in body and "TILE_dt1 = 4" in body

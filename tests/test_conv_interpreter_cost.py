"""The expert's conv kernels are cheap under Triton's CPU interpreter and right on tiny shapes
(#36 item 4), counted, not timed: one fresh TRITON_INTERPRET=1 process (tests/conv_cost_driver.py)
runs each candidate once and reports the programs it ran, its tile ops (the interpreter's
create_* calls, each a numpy call), its tl.dot calls, its int32 add/sub/mul (each followed by
the interpreter's overflow check, several more tile ops) and the (row, tap) pairs its input
gathers masked off."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAD = "import torch\nimport torch.nn as nn\n\n"
SPECS = {  # name: (layer, input shape)
    "padded16": ("nn.Conv2d(16, 16, 3, padding=1, bias=False)", "2, 16, 12, 12"),  # K = 144: 3 steps of 64
    "padded64": ("nn.Conv2d(64, 16, 3, padding=1, bias=False)", "2, 64, 12, 12"),  # K = 576: 9 steps
    "depthwise": ("nn.Conv2d(32, 32, 3, padding=1, groups=32)", "2, 32, 8, 8"),
    "transposed": ("nn.ConvTranspose2d(16, 16, 3, stride=2, padding=1, output_padding=1, groups=2)", "2, 16, 5, 6"),
    # 3-D, strided per dim, dilated where the stride is 2: phases with 1, 2 or (dilation 2) 0 or 3 taps
    "transposed3d": ("nn.ConvTranspose3d(4, 6, (3, 4, 3), stride=(2, 1, 2), padding=(1, 2, 0), output_padding=(1, 0, 0), "
                     "dilation=(1, 1, 2))", "2, 4, 3, 5, 4"),
}


def _write(tmp_path: Path, name: str, layer: str, shape: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(HEAD + textwrap.dedent(f"""
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = {layer}

            def forward(self, x):
                return self.conv(x)


        def get_inputs():
            return [torch.randn({shape})]


        def get_init_inputs():
            return []
        """))
    return path


def test_conv_kernels_are_right_and_cheap_per_program_and_k_step(tmp_path):
    paths = [str(_write(tmp_path, name, *spec)) for name, spec in SPECS.items()]
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "conv_cost_driver.py"), *paths], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, env={"PYTHONPATH": str(ROOT),
                                                                            "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-2000:]
    runs = {r["spec"][:-3]: r for r in map(json.loads, done.stdout.splitlines())}
    assert set(runs) == set(SPECS)
    for name, r in runs.items():
        assert r["error"] < 1e-4, (name, r)
    small, large = runs["padded16"], runs["padded64"]
    # One program of 512 rows; the K loop runs 3 and 9 steps, one tl.dot each.
    assert (small["programs"], small["dots"], large["programs"], large["dots"]) == (1, 3, 1, 9)
    # int64 index math: the int32 arithmetic (and its overflow checks) is the program's set-up only,
    # the same however many K steps run; a K step costs half the tile ops the int32 gather did.
    assert large["int32_checked"] == small["int32_checked"] <= 12, (small, large)
    assert (large["ops"] - small["ops"]) / 6 <= 110, (small, large)  # 195 before (#36)
    # Depthwise: the direct kernel, one program for all 32 groups (the GEMM ran one per group), no tl.dot.
    depthwise = runs["depthwise"]
    assert depthwise["direct"] and (depthwise["programs"], depthwise["dots"]) == (1, 0), depthwise
    assert depthwise["ops"] <= 800, depthwise
    transposed = runs["transposed"]  # grouped: group g's weight rows and columns (a wrong group's are not)
    # Strided: one launch per stride phase (2 x 2 phases x 2 groups), each gathering only its own taps:
    # the (row, tap) pairs masked off are the borders' (12%), not the taps between inputs (78% before).
    assert transposed["programs"] == 8 and transposed["int32_checked"] <= 12 * 8, transposed
    assert transposed["masked_pairs"] <= 0.2 * transposed["pairs"], transposed
    t3d = runs["transposed3d"]  # 2 x 1 x 2 phases; what is masked is the borders' taps of a tiny input
    assert t3d["programs"] == 4 and t3d["masked_pairs"] <= 0.5 * t3d["pairs"], t3d


def test_a_transposed_3d_conv_whose_phases_take_the_wrong_taps_is_wrong(tmp_path):
    # the broken control of the phase decomposition: every tap of a phase (not every 2nd) along dim 0
    path = str(_write(tmp_path, "transposed3d", *SPECS["transposed3d"]))
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "conv_cost_driver.py"), path], cwd=ROOT,
                          capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "CONV_DRIVER_BREAK": "j_0 * 2|j_0 * 1"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.splitlines()[0])["error"] > 1e-2

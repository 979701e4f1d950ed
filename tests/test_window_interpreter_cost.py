"""The expert's pooling kernels are cheap under Triton's CPU interpreter and right (#36): counted, not
timed, in one fresh TRITON_INTERPRET=1 process (this file run as a script) that renders each pool's
first configuration, runs it once against the reference and reports the programs it ran and its tile
ops (the interpreter's create_* calls, each a numpy call). A real KernelBench 4x4 max pool timed out
at 256 lanes per program (21 s per call); bounds are checked only on a dim a window can leave
(padding, or ceil_mode's last window), each at the loop level that moves that dim."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPECS = {  # name: (layer, input shape); ours, KernelBench-style
    "unpadded_max": ("nn.MaxPool2d(3, stride=1)", "2, 5, 13, 11"),
    "padded_max": ("nn.MaxPool2d(3, stride=1, padding=1)", "2, 5, 13, 11"),
    "unpadded_avg": ("nn.AvgPool2d(3, stride=2)", "2, 5, 13, 11"),
    "ceil_max": ("nn.MaxPool2d(2, stride=2, ceil_mode=True)", "2, 5, 13, 11"),  # the last window runs past
}


def _write(folder: Path, name: str, layer: str, shape: str) -> Path:
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(f"""\
        import torch
        import torch.nn as nn


        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.pool = {layer}

            def forward(self, x):
                return self.pool(x) * 1.5


        def get_inputs():
            return [torch.randn({shape})]


        def get_init_inputs():
            return []
        """))
    return path


def _run(path: str) -> dict:
    """In the interpreter process: the first configuration's program and tile-op counts, and its error."""
    import importlib.util

    import torch
    from triton.runtime import interpreter

    from opforge.codegen import generate
    from opforge.harness.spec import load_module, read_source

    counts = {"programs": 0, "ops": 0}

    def counting(method, key):
        def wrapped(self, *args, **kwargs):
            counts[key] += 1
            return method(self, *args, **kwargs)
        return wrapped

    builder = interpreter.InterpreterBuilder
    for name in [n for n in dir(builder) if n.startswith("create_")]:
        setattr(builder, name, counting(getattr(builder, name), "ops"))
    builder.set_grid_idx = counting(builder.set_grid_idx, "programs")
    module = load_module(path)
    torch.manual_seed(0)
    kernel = generate(read_source(path), "op", {})
    with tempfile.TemporaryDirectory() as tmp:
        file = os.path.join(tmp, "candidate.py")
        Path(file).write_text(kernel.render(kernel.space[0]))
        spec = importlib.util.spec_from_file_location("candidate", file)
        candidate = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(candidate)
    x = module.get_inputs()[0]
    want = module.Model().eval()(x)
    counts["programs"] = counts["ops"] = 0
    got = candidate.ModelNew()(x)
    return counts | {"family": kernel.family, "outputs": want.numel(), "block": kernel.space[0]["BLOCK"],
                     "error": float((got - want).abs().max()) if got.shape == want.shape else float("inf")}


def test_pool_kernels_are_right_with_few_programs_and_bounds_only_where_a_window_leaves(tmp_path):
    paths = [str(_write(tmp_path, name, *spec)) for name, spec in SPECS.items()]
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "TRITON_INTERPRET": "1"}
    done = subprocess.run([sys.executable, __file__, *paths], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    runs = {r["spec"]: r for r in map(json.loads, done.stdout.splitlines())}
    assert set(runs) == set(SPECS)
    for name, r in runs.items():
        assert r["family"] == "window" and r["error"] < 1e-5, (name, r)
    # Wide programs: the first configuration covers >= 1024 outputs (the 715 here: one program).
    assert all(r["block"] >= 1024 and r["programs"] == 1 for r in runs.values()), runs
    # 9 taps each: unpadded, the taps carry no bounds ops (measured 212 tile ops; 303 with bounds on
    # every dim); padded, each dim's bounds at its own loop level (296; per tap on every dim: ~400).
    unpadded, padded = runs["unpadded_max"]["ops"], runs["padded_max"]["ops"]
    assert unpadded < 250 and padded < 330, runs


if __name__ == "__main__":
    for spec_path in sys.argv[1:]:
        print(json.dumps({"spec": Path(spec_path).stem, **_run(spec_path)}), flush=True)

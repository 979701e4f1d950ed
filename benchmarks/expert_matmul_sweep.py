"""Sweep the matmul generator's tuning space on a GPU: each configuration of the expert's kernel for
a few realistic GEMM shapes, timed against PyTorch eager in the same process (do_bench medians).
The ordering of `SPACE` in backends/triton/emit/matmul.py and the numbers in its comments come from this.

    .venv/bin/python benchmarks/expert_matmul_sweep.py [--json rows.json]

Without a GPU it says so and exits 0."""
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from opforge.backends.triton.emit import matmul  # noqa: E402
from opforge.codegen.lower import lower, state_shapes  # noqa: E402
from opforge.harness.spec import declared_sizes, load_module  # noqa: E402

SHAPES = {
    "mm2048": "def forward(self, a, b):\n        return a @ b\ndef get_inputs():\n"
              "    return [torch.randn(2048, 2048), torch.randn(2048, 2048)]\n",
    "linear_gelu4096": "def __init__(self):\n        super().__init__()\n        self.fc = torch.nn.Linear(4096, 4096)\n"
                       "    def forward(self, x):\n        return torch.nn.functional.gelu(self.fc(x))\n"
                       "def get_inputs():\n    return [torch.randn(4096, 4096)]\n",
    "bmm32x512": "def forward(self, a, b):\n        return torch.bmm(a, b)\ndef get_inputs():\n"
                 "    return [torch.randn(32, 512, 512), torch.randn(32, 512, 512)]\n",
    "scores": "def forward(self, q, k):\n        return (q @ k.transpose(-2, -1)) * 0.125\ndef get_inputs():\n"
              "    return [torch.randn(8, 16, 512, 64), torch.randn(8, 16, 512, 64)]\n",
    "matvec8192": "def forward(self, a, b):\n        return a @ b\ndef get_inputs():\n"
                  "    return [torch.randn(8192, 8192), torch.randn(8192, 1)]\n",
    "rowvec8192": "def forward(self, a, b):\n        return a @ b\ndef get_inputs():\n"
                  "    return [torch.randn(1, 8192), torch.randn(8192, 8192)]\n",
}


def _bench(fn) -> float:
    import triton.testing

    with torch.no_grad():
        return float(triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median"))


def _module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def sweep(name: str, body: str, tmp: Path) -> dict:
    path = tmp / f"{name}.py"
    path.write_text("import torch\nclass Model(torch.nn.Module):\n    " + body)
    spec = load_module(path)
    torch.manual_seed(0)
    ref = spec.Model().cuda().eval()
    inputs = [x.cuda() for x in spec.get_inputs()]
    with torch.no_grad():
        want = ref(*inputs)
    kernel = matmul.generate(lower(path), name, state_shapes(path, declared_sizes(spec)))
    rows = []
    for i, config in enumerate(kernel.space):
        candidate = tmp / f"{name}_{i}.py"
        candidate.write_text(kernel.render(config))
        new = _module(candidate, f"sweep_{name}_{i}").ModelNew().cuda().eval()
        new.load_state_dict(ref.state_dict())
        with torch.no_grad():
            err = float((new(*inputs) - want).abs().max() / want.abs().max())
        rows.append({"config": config, "ms": _bench(lambda: new(*inputs)), "rel_err": err})
    return {"shape": name, "eager_ms": _bench(lambda: ref(*inputs)), "configs": rows}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA GPU: the matmul sweep needs one")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        results = [sweep(name, body, Path(tmp)) for name, body in SHAPES.items()]
    for result in results:
        print(f"{result['shape']}: eager {result['eager_ms']:.4f} ms")
        for row in sorted(result["configs"], key=lambda r: r["ms"]):
            print(f"  {row['ms']:.4f} ms  rel err {row['rel_err']:.1e}  {row['config']}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

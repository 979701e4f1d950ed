"""Specs in vLLM's calling convention with `implements` keys, and plain-PyTorch "kernels" for them:
tests/test_export_vllm_adapter.py records them in a registry by hand (no verification) and exports
the package whose vLLM adapter it then runs inside vLLM. The kernels compute vLLM's own semantics,
so a layer the adapter replaced gives the in-tree layer's values."""

HEAD = '''import torch

OPFORGE = dict(name="{name}", dtypes=["float32"], implements=["{key}"])
'''
BODIES = {
    ("rms_w", "vllm:rms_norm"): '''

class Model(torch.nn.Module):
    def __init__(self, eps=1e-6):
        super().__init__()
        self.eps = eps

    def forward(self, x, weight):
        h = x.float()
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return (h.to(weight.dtype) * weight).to(x.dtype)


def get_inputs():
    return [torch.randn(4, 64), torch.randn(64)]


def get_init_inputs():
    return [1e-6]
''',
    ("add_rms_w", "vllm:fused_add_rms_norm"): '''

class Model(torch.nn.Module):
    def __init__(self, eps=1e-6):
        super().__init__()
        self.eps = eps

    def forward(self, x, residual, weight):
        h = x.float() + residual.float()
        new_residual = h.to(x.dtype)
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return (h.to(weight.dtype) * weight).to(x.dtype), new_residual


def get_inputs():
    return [torch.randn(4, 64), torch.randn(4, 64), torch.randn(64)]


def get_init_inputs():
    return [1e-6]
''',
    ("silu_mul", "vllm:silu_and_mul"): '''

class Model(torch.nn.Module):
    def forward(self, x):
        d = x.shape[-1] // 2
        return torch.nn.functional.silu(x[..., :d]) * x[..., d:]


def get_inputs():
    return [torch.randn(4, 64)]


def get_init_inputs():
    return []
''',
    ("gelu_tanh_mul", "vllm:gelu_tanh_and_mul"): '''

class Model(torch.nn.Module):
    def __init__(self, approximate="tanh"):
        super().__init__()
        self.approximate = approximate

    def forward(self, x):
        d = x.shape[-1] // 2
        return torch.nn.functional.gelu(x[..., :d], approximate=self.approximate) * x[..., d:]


def get_inputs():
    return [torch.randn(4, 64)]


def get_init_inputs():
    return ["tanh"]
''',
}
ROPE = '''

class Model(torch.nn.Module):
    def _rotate(self, x, cos, sin):
        if {neox}:
            x1, x2 = x.chunk(2, dim=-1)
            return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)
        x1, x2 = x[..., ::2], x[..., 1::2]
        return torch.stack((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1).flatten(-2)

    def forward(self, positions, query, key, cos_sin_cache):
        rot = cos_sin_cache.shape[-1]
        if {full_only} and rot != query.shape[-1]:
            raise ValueError(f"partial rotary ({rot} of {query.shape[-1]} dims) is not covered by this spec")
        cos, sin = cos_sin_cache.index_select(0, positions).chunk(2, dim=-1)
        cos, sin = cos.unsqueeze(-2), sin.unsqueeze(-2)
        return tuple(torch.cat((self._rotate(t[..., :rot], cos, sin), t[..., rot:]), dim=-1) for t in (query, key))


def get_inputs():
    return [torch.randint(0, 16, (5,)), torch.randn(5, 4, 32), torch.randn(5, 2, 32), torch.randn(16, 32)]


def get_init_inputs():
    return []
'''
# The GPT-J one covers full rotary only, as a spec may: a partial-rotary layer must run vLLM's code
BODIES[("rope_neox", "vllm:rotary_embedding:neox")] = ROPE.replace("{neox}", "True").replace("{full_only}", "False")
BODIES[("rope_gptj", "vllm:rotary_embedding:gptj")] = ROPE.replace("{neox}", "False").replace("{full_only}", "True")


def specs() -> dict[str, tuple[str, str]]:
    """op name -> (spec source, kernel source: the spec's Model renamed ModelNew)."""
    out = {}
    for (name, key), body in BODIES.items():
        source = HEAD.format(name=name, key=key) + body
        out[name] = (source, source.replace("class Model(", "class ModelNew("))
    return out

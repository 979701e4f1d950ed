"""Order-dependent: programs add their partial sums into the output under a spin lock (acquire by
compare-and-swap, release by exchange: no race), so the float additions happen in the order the
programs ran, and the result's last bits change with it. Float atomics are allowed that; plain
arithmetic ordered by a lock must be deterministic (rejected: order-dependent)."""
import torch
import triton
import triton.language as tl


@triton.jit
def _sum(x_ptr, lock_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    partial = tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0))
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    tl.store(out_ptr, tl.load(out_ptr) + partial)
    tl.atomic_xchg(lock_ptr, 0)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        out = torch.zeros(1, dtype=x.dtype, device=x.device)
        lock = torch.zeros(1, dtype=torch.int32, device=x.device)
        _sum[(triton.cdiv(x.numel(), 8),)](x, lock, out, x.numel(), BLOCK=8)
        return out

"""Class 3, threads: the softmax is computed in a thread that is joined before forward returns
(dispatch modes are per thread, and a joined thread is no longer 'live'). Static checks forbid
the import; verified with them skipped so the runtime refusal is what rejects it."""
import threading

import torch
import triton
import triton.language as tl


@triton.jit
def _copy_kernel(src_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        done = torch.empty_like(x)
        worker = threading.Thread(target=lambda: done.copy_(torch.softmax(x, dim=-1)))
        worker.start()
        worker.join()
        out = torch.empty_like(x)
        _copy_kernel[(triton.cdiv(x.numel(), 1024),)](done, out, x.numel(), BLOCK=1024)
        return out

"""A correct per-plane centering of an NCHW tensor (tests/data/stress_specs/tiny_plane_center.py):
each program finds its plane through the input's own batch and channel strides, so any layout
(contiguous, transposed, sliced, channels_last) is read right. The control beside
hostile_channels_last.py."""
import torch
import triton
import triton.language as tl


@triton.jit
def _plane_center_kernel(x_ptr, out_ptr, C, H, W, s0, s1, s2, s3, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    n, c = pid // C, pid % C
    idx = tl.arange(0, BLOCK)
    mask = idx < H * W
    h, w = idx // W, idx % W
    x = tl.load(x_ptr + n * s0 + c * s1 + h * s2 + w * s3, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / (H * W)
    tl.store(out_ptr + pid * H * W + idx, x - mean, mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        n, c, h, w = x.shape
        out = torch.empty((n, c, h, w), dtype=x.dtype, device=x.device)
        _plane_center_kernel[(n * c,)](x, out, c, h, w, *x.stride(), BLOCK=triton.next_power_of_2(h * w))
        return out

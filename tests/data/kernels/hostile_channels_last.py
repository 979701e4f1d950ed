"""Class 4, layouts, in four dimensions: the (image, channel) planes taken to follow one another,
plane p at p * x.stride(1), as an instance-norm kernel that merges N and C into one program index
does. True whenever the batch stride is C times the channel stride: contiguous, transposed (H and W
swapped in memory) and sliced (padded rows) inputs are all read right; a channels_last input
(channel stride 1) is not. In bounds in every layout: only the channels_last stress case can tell."""
import torch
import triton
import triton.language as tl


@triton.jit
def _plane_center_kernel(x_ptr, out_ptr, H, W, plane_stride, s2, s3, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    idx = tl.arange(0, BLOCK)
    mask = idx < H * W
    h, w = idx // W, idx % W
    x = tl.load(x_ptr + pid * plane_stride + h * s2 + w * s3, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / (H * W)
    tl.store(out_ptr + pid * H * W + idx, x - mean, mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        n, c, h, w = x.shape
        out = torch.empty((n, c, h, w), dtype=x.dtype, device=x.device)
        _plane_center_kernel[(n * c,)](x, out, h, w, x.stride(1), x.stride(2), x.stride(3),
                                       BLOCK=triton.next_power_of_2(h * w))
        return out

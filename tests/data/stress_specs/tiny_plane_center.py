"""Each (image, channel) plane of an NCHW tensor minus its mean, tiny sizes: the layout stress
cases' 4-D spec (channels_last applies only to 4-D inputs)."""
import torch

OPFORGE = dict(name="tiny_plane_center", tags=["norm"])

batch_size = 2
channels = 3
height = 5
width = 6


class Model(torch.nn.Module):
    def forward(self, x):
        return x - x.mean(dim=(2, 3), keepdim=True)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(1, 4, 3, 7)]]

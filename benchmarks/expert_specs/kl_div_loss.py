"""KL divergence of softmax-normalised distributions: kl_div(log(predictions), targets, 'batchmean')."""
import torch

OPFORGE = dict(name="kl_div_loss", dtypes=["float32"], tags=["loss", "kl_div", "log", "scalar-output"], family="loss")

batch_size = 4096
num_classes = 4096


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return torch.nn.functional.kl_div(torch.log(predictions), targets, reduction="batchmean")


def get_inputs():
    return [torch.randn(batch_size, num_classes).softmax(dim=-1), torch.randn(batch_size, num_classes).softmax(dim=-1)]


def get_init_inputs():
    return []


def get_input_variants():
    return [
        [torch.randn(7, 1001).softmax(dim=-1), torch.randn(7, 1001).softmax(dim=-1)],
        [torch.randn(1, 3).softmax(dim=-1), torch.randn(1, 3).softmax(dim=-1)],
        [(torch.randn(129, 701) * 4).softmax(dim=-1), torch.randn(129, 701).softmax(dim=-1)],
    ]

"""Cross-entropy loss of logits [N, C] against int64 class targets [N], mean over rows."""
import torch

OPFORGE = dict(name="cross_entropy", dtypes=["float32"], tags=["loss", "cross_entropy", "softmax", "row"], family="loss")

batch_size = 4096
num_classes = 32000  # Llama vocabulary


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, targets):
        return torch.nn.functional.cross_entropy(logits, targets)


def get_inputs():
    return [torch.randn(batch_size, num_classes), torch.randint(0, num_classes, (batch_size,))]


def get_init_inputs():
    return []


def get_input_variants():
    # A single row, a ragged class count, many rows of few classes, and a full vocabulary row set.
    return [
        [torch.randn(1, 1000), torch.randint(0, 1000, (1,))],
        [torch.randn(33, 4097) * 5, torch.randint(0, 4097, (33,))],
        [torch.randn(1000, 10), torch.randint(0, 10, (1000,))],
        [torch.randn(7, 32000), torch.randint(0, 32000, (7,))],
    ]

"""Binary cross-entropy of probabilities in (0, 1) against {0, 1} targets, mean reduction."""
import torch

OPFORGE = dict(name="bce_loss", dtypes=["float32"], tags=["loss", "bce", "log", "scalar-output"], family="loss")

batch_size = 4096
dim = 8192


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return torch.nn.functional.binary_cross_entropy(predictions, targets)


def get_inputs():
    return [torch.rand(batch_size, dim).clamp(1e-4, 1 - 1e-4), torch.randint(0, 2, (batch_size, dim)).float()]


def get_init_inputs():
    return []


def get_input_variants():
    return [
        [torch.rand(13, 2003).clamp(1e-4, 1 - 1e-4), torch.randint(0, 2, (13, 2003)).float()],
        [torch.rand(1, 5).clamp(1e-4, 1 - 1e-4), torch.rand(1, 5)],  # soft targets
        [torch.rand(3, 41, 777).clamp(1e-4, 1 - 1e-4), torch.randint(0, 2, (3, 41, 777)).float()],
    ]

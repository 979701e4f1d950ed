"""A greedy sampler: fp32 log-softmax of the logits, the chosen token id and its logprob (vLLM's Sampler)."""
import torch

OPFORGE = dict(name="greedy_sample_logprob", dtypes=["float32"], family="serving",
               tags=["serving", "sampler", "argmax", "log-softmax", "fp32"])

num_seqs = 8
vocab_size = 256


class Model(torch.nn.Module):
    def forward(self, logits):
        logprobs = torch.log_softmax(logits.float(), dim=-1)
        sampled_logprob, sampled = logprobs.max(dim=-1)
        return sampled, sampled_logprob


def get_inputs():
    return [torch.randn(num_seqs, vocab_size)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(1, vocab_size)], [torch.randn(5, 33)]]

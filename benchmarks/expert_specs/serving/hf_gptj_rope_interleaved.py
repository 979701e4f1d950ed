"""HF transformers GPT-J `apply_rotary_pos_emb`: `rotate_every_two` (`stack((-x2, x1), -1).flatten(-2)` of the
even and odd dims), sin/cos split from one table gathered by `position_ids` and `repeat_interleave`d, partial
rotary with the pass-through dims concatenated back; q/k in the [B, S, H, D] layout, fp16."""
import torch

OPFORGE = dict(name="hf_gptj_rope_interleaved", dtypes=["float16", "int64"], family="serving",
               tags=["serving", "rotary", "rope", "gptj", "interleaved", "partial-rotary", "hf", "positions",
                     "gather", "fp16"],
               # head geometry and the table's length are the model's, not problem sizes
               fixed_sizes=["head_dim", "rotary_dim", "max_position"])

batch = 2
seq_len = 128
num_heads = 16  # GPT-J-6B: 16 heads of 256, rotary on the first 64 dims
head_dim = 256
rotary_dim = 64
max_position = 2048


def rotate_every_two(x):
    """transformers.models.gptj.modeling_gptj.rotate_every_two."""
    x1 = x[:, :, :, ::2]
    x2 = x[:, :, :, 1::2]
    x = torch.stack((-x2, x1), dim=-1)
    return x.flatten(-2)


class Model(torch.nn.Module):
    """embed_positions [max_position, rotary_dim]: sin in the first half, cos in the second (HF's
    create_sinusoidal_positions); q/k [B, S, H, head_dim], position_ids [B, S]; computed in fp16."""

    def __init__(self, rotary_dim, max_position):
        super().__init__()
        self.rotary_dim = rotary_dim
        inv_freq = 1.0 / (10000 ** (torch.arange(0, rotary_dim, 2, dtype=torch.int64) / rotary_dim))
        sinusoid = torch.einsum("i , j -> i j", torch.arange(max_position, dtype=torch.int64).float(), inv_freq).float()
        table = torch.cat((torch.sin(sinusoid), torch.cos(sinusoid)), dim=1).to(torch.float16)
        self.register_buffer("embed_positions", table)  # persistent: the harness copies state_dict

    def _embed(self, x, sin, cos):
        x_rot, x_pass = x[:, :, :, : self.rotary_dim], x[:, :, :, self.rotary_dim:]
        x_rot = (x_rot * cos) + (rotate_every_two(x_rot) * sin)
        return torch.cat([x_rot, x_pass], dim=-1)

    def forward(self, query, key, position_ids):
        sincos = self.embed_positions[position_ids]
        sin, cos = torch.split(sincos, sincos.shape[-1] // 2, dim=-1)
        sin = torch.repeat_interleave(sin[:, :, None, :], 2, 3)  # [B, S, 1, rotary_dim]
        cos = torch.repeat_interleave(cos[:, :, None, :], 2, 3)
        return self._embed(query, sin, cos), self._embed(key, sin, cos)


def _inputs(b, s, offset=0):
    positions = (torch.arange(s, dtype=torch.int64) + offset).expand(b, s).contiguous()
    return [torch.randn(b, s, num_heads, head_dim).to(torch.float16),
            torch.randn(b, s, num_heads, head_dim).to(torch.float16), positions]


def get_inputs():
    return _inputs(batch, seq_len)


def get_init_inputs():
    return [rotary_dim, max_position]


def get_input_variants():
    # A decode step per sequence at the table's end; a ragged prefill after a cached prefix.
    return [_inputs(3, 1, max_position - 1), _inputs(1, 37, 500)]

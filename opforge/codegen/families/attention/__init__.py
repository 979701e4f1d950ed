"""The attention family: softmax(q @ kᵀ * scale [+ mask]) @ v with its operands' layouts, GQA and a
paged KV cache read as axes (axes.py), for one flash-attention kernel (plan.py)."""

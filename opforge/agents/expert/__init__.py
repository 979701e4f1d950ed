"""The offline expert: lowers a PyTorch reference to core ATen with torch.export and generates
Triton source from the graph — pointwise chains, row reductions and scans with fused prologue and
epilogue, and matmuls with fused epilogues. Anything else is reported as unsupported, naming the
ATen ops, so the LLM drafter can take over."""

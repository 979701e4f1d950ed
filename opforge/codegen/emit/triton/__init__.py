"""The Triton emitters, one per family, tried in this order by codegen.generate: matmul (an
mm/bmm with a fused epilogue), rowwise (reductions and scans with fused prologue and epilogue),
pointwise, window (max/avg pooling)."""
EMITTERS = ("matmul", "rowwise", "pointwise", "window")

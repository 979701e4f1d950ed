"""The Triton emitters, one per family, tried in this order by codegen.generate: conv (one
aten.convolution as an implicit GEMM with a fused epilogue), matmul (an mm/bmm with a fused
epilogue), rowwise (reductions and scans with fused prologue and epilogue), pointwise, window
(max/avg pooling)."""
EMITTERS = ("conv", "attention", "matmul", "scatter", "sort", "rowwise", "pointwise", "window")

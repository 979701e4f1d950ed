"""The conv family: one aten.convolution (1-, 2- or 3-D, strided, padded, dilated, grouped, or
transposed) read as an implicit GEMM, with the pointwise epilogue after it (plan.py)."""

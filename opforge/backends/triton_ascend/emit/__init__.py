"""The Triton-Ascend emitters, tried in this order by codegen.generate: rowwise, pointwise. They read
the same plans as the Triton ones and reuse their text (expressions, loads, passes, launchers); what
differs is Ascend's: a 1-D grid of at most NUM_CORES programs, each looping over blocks
(`for blk in tl.range(pid, n_blocks, NUM_CORES)`), tiles sized by the unified-buffer rule
(common.py), unit-stride last axes, and no GPU launch options."""
EMITTERS = ("rowwise", "pointwise")

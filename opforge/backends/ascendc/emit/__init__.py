"""The AscendC emitters, in the order codegen.generate tries them: pointwise (a CopyIn/Compute/
CopyOut pipeline over double-buffered queues, host tiling across the AI vector cores). Candidates
are in opforge's direct-launch form: ASCENDC_SOURCES (tiling header, kernel with its launcher,
torch_npu binding) and a ModelNew calling the binding."""
EMITTERS = ("pointwise",)
# One kernel project per candidate: the partitioner cannot splice a program of several.
SINGLE_KERNEL = "an AscendC candidate is one kernel project, not a program of several"

"""The CUDA C++ emitters, in the order codegen.generate tries them: rowwise (one block per row,
warp-shuffle reductions), pointwise (a grid-stride loop). Candidates are in opforge's CUDA format:
CUDA_SRC with __global__ kernels and extern "C" launchers, loaded with opforge.cuda.load_cuda."""
EMITTERS = ("rowwise", "pointwise")

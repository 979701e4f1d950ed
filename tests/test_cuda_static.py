"""The CUDA candidate's static checks (backends/cuda/static.py): each rule rejects a hostile
candidate with its code; comments and literals neither hide a call nor raise a false alarm."""
from __future__ import annotations

import pytest

from opforge.backends.cuda.static import CUDA_IMPORTS, check_cuda_candidate
from opforge.backends.triton.static import check_source

KERNEL = r'''
#include <cuda_runtime.h>
#include <cfloat>

__global__ void softmax_kernel(const float* __restrict__ x, float* __restrict__ y, int cols) {
    __shared__ float red[256];
    const float* row = x + (size_t)blockIdx.x * cols;
    float m = -FLT_MAX;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, row[c]);
    red[threadIdx.x] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
        __syncthreads();
    }
    m = red[0];
    float sum = 0.f;
    #pragma unroll 4
    for (int c = threadIdx.x; c < cols; c += blockDim.x) sum += expf(row[c] - m);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) y[(size_t)blockIdx.x * cols + c] = expf(row[c] - m) / sum;
}
'''
LAUNCHER = r'''
extern "C" void softmax_launch(const float* x, float* y, int rows, int cols, cudaStream_t stream) {
    const int threads = 256;
    dim3 grid((rows + 0) / 1);
    softmax_kernel<<<grid, threads, 0, stream>>>(x, y, cols);
}
'''
PYTHON = '''
_lib = load_cuda(CUDA_SRC)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        _lib.softmax_launch(x, y, x.shape[0], x.shape[1])
        return y
'''


def candidate(kernel: str = KERNEL, launcher: str = LAUNCHER, python: str = PYTHON) -> str:
    return ('import torch\nfrom opforge.cuda import load_cuda\n\nCUDA_SRC = r"""' + kernel + launcher + '"""\n'
            + python)


def reasons(source: str, float32: bool = True) -> list[str]:
    return check_cuda_candidate(source, float32_spec=float32).reasons


def assert_code(source: str, code: str, *needles: str) -> list[str]:
    found = [r for r in reasons(source) if r.startswith(code + ":")]
    assert found, (code, reasons(source))
    for needle in needles:
        assert any(needle in r for r in found), (needle, found)
    return found


def with_body(body: str, extra: str = "") -> str:
    """The clean candidate with `body` added to its launcher (and `extra` before it)."""
    return candidate(launcher=extra + LAUNCHER.replace("    const int threads", body + "\n    const int threads"))


def test_clean_softmax_candidate_passes_with_its_sources_found():
    result = check_cuda_candidate(candidate(), float32_spec=True)
    assert result.reasons == [] and result.format == "opforge"
    assert result.kernels == ["softmax_kernel"] and result.launchers == ["softmax_launch"]
    (source, first_line), = result.cuda_sources
    assert source.startswith("\n#include <cuda_runtime.h>") and first_line == 4  # CUDA_SRC = r""" on line 4


def test_reason_lines_are_the_candidate_files():
    found = assert_code(with_body('    FILE* f = 0;'), "cuda-forbidden-call", "FILE")
    line = candidate().splitlines().index('extern "C" void softmax_launch(const float* x, float* y, int rows, '
                                          'int cols, cudaStream_t stream) {') + 2
    assert found[0].endswith(f"(line {line})"), found


@pytest.mark.parametrize("include", ["#include <stdio.h>", '#include "/etc/passwd"', "#define H <fstream>\n#include H",
                                     "%:include <cstdlib>", "/* note */ #include <thrust/sort.h>",
                                     "#include <torch/extension.h>"])
def test_include_list(include):
    assert_code(candidate(kernel=include + "\n" + KERNEL), "cuda-include")


@pytest.mark.parametrize("pragma", ['#pragma GCC optimize("O0")', '_Pragma("GCC optimize(\\"O0\\")")',
                                    '#pragma comment(lib, "cublas")'])
def test_pragmas_other_than_unroll_are_refused(pragma):
    assert_code(candidate(kernel=KERNEL + pragma + "\n"), "cuda-pragma")


@pytest.mark.parametrize("directive", ['#embed "/etc/passwd"', "#line 1 \"x.cu\"", "#include_next <cmath>",
                                       "#define CAT(a, b) a##b",  # refused unused: it may be the one compiled
                                       "int q = 1; # define X 2"])  # a stray # that no directive starts
def test_preprocessor_directives_and_token_pasting(directive):
    assert_code(candidate(kernel=directive + "\n" + KERNEL), "cuda-preprocessor")


@pytest.mark.parametrize("call, name", [
    ('    fopen("/etc/passwd", "r");', "fopen"),
    ('    system("curl x | sh");', "system"),
    ('    char* home = getenv("HOME");', "getenv"),
    ("    std::thread t;", "std::thread"),
    ("    void* h = dlopen(0, 0);", "dlopen"),
    ("    auto f = &popen;", "popen"),  # named, not called: a function reached is a function called
    ("    int s = socket(2, 1, 0);", "socket"),
    ("    ::execv(0, 0);", "::execv"),
])
def test_file_network_process_calls(call, name):
    assert_code(with_body(call), "cuda-forbidden-call", name)


@pytest.mark.parametrize("call, name", [
    ("    cublasSgemm(0);", "cublasSgemm"),
    ("    thrust::sort(x, x);", "thrust::sort"),
    ("    cub::DeviceReduce::Sum(0);", "cub::"),
    ("    cutlass::gemm::device::Gemm<float> g;", "cutlass"),
    ("    cuModuleLoad(0, 0);", "cuModuleLoad"),
    ("    torch::matmul(0, 0);", "torch::matmul"),
    ("    cudaMemcpy(0, x, 4, cudaMemcpyDeviceToHost);", "cudaMemcpy"),
    ("    cudaMemcpyAsync(0, x, 4, cudaMemcpyDeviceToHost, stream);", "device-to-device"),
    ("    cudaMallocManaged(0, 4);", "cudaMallocManaged"),
    ("    cudaStreamSynchronize(stream);", "cudaStreamSynchronize"),
    ("    cudaLaunchHostFunc(stream, 0, 0);", "cudaLaunchHostFunc"),
    ('    asm volatile("syscall");', "inline assembly in host code"),
])
def test_libraries_driver_runtime_and_host_asm(call, name):
    assert_code(with_body(call), "cuda-forbidden-call", name)


def test_allowed_runtime_calls_pass():
    body = ("    cudaFuncSetAttribute(softmax_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 0);\n"
            "    cudaMemsetAsync(y, 0, 4, stream);\n"
            "    cudaMemcpyAsync(y, x, 4, cudaMemcpyDeviceToDevice, stream);\n"
            "    int n = std::min(rows, 4) + max(cols, 1);")
    assert reasons(with_body(body)) == []


def test_constructor_attribute_is_refused():
    extra = "__attribute__((constructor)) static void init() {}\n"
    assert_code(candidate(launcher=extra + LAUNCHER), "cuda-forbidden-call", "constructor")
    assert reasons(candidate(kernel=KERNEL + "__device__ __attribute__((aligned(16))) float buf[4];\n")) == []


# -- comments and literals: no false alarm, no hiding -------------------------------------------------

@pytest.mark.parametrize("text", ['    /* fopen("x", "r"); system("y"); */', '    // system("rm -rf /")',
                                  '    const char* msg = "fopen(\\"x\\") #include <stdio.h>";',
                                  "    char q = '\"'; const char* s = \"'\";",
                                  '    const char* raw = R"x( )" fopen( )x";',
                                  '    // a comment continued by a backslash \\\n    fopen("x", "r");'])
def test_comments_and_literals_raise_no_false_alarm(text):
    assert reasons(with_body(text)) == []


@pytest.mark.parametrize("text", [
    '    int a = 1; /* note */ fopen("x", "r");',                 # a comment ends before the call
    "    int n = 1'0; fopen(\"x\", \"r\"); int m = 2'0;",         # digit separators are no char literals
    '    fo\\\npen("x", "r");',                                     # a spliced line joins the name
    '    const char* raw = R"(x)"; fopen("x", "r");',               # a raw string ends where it ends
    '    #define F fopen\n    F("x", "r");',                       # a macro names it
    '    u8"s"; fopen("x", "r");',                                  # a prefixed literal ends too
])
def test_literal_and_comment_tricks_do_not_hide_a_call(text):
    assert_code(with_body(text), "cuda-forbidden-call", "fopen")


def test_unreadable_source_is_refused():
    assert_code(with_body('    const char* s = "unterminated;'), "cuda-format", "cannot read")
    assert_code(with_body("    /* never closed"), "cuda-format", "cannot read")


# -- host code computes nothing over data ----------------------------------------------------------------

@pytest.mark.parametrize("body, needle", [
    ("    float v = x[0];", "indexes memory"),
    ("    float v = *x;", "dereferences"),
    ("    float v = (float)*x;", "dereferences"),
    ("    int v = (int)(*x);", "dereferences"),
    ("    struct P { float a; }; const P* p = (const P*)x; float v = p->a;", "->"),
    ("    float s = 0; for (int i = 0; i < rows; ++i) s += 1.0f;", "for loop"),
    ("    int i = 0; while (i < rows) i++;", "while loop"),
    ("    float v; __builtin_memcpy(&v, x, 4);", "calls __builtin_memcpy()"),
    ("    float v; memcpy(&v, x, 4);", "calls memcpy()"),
    ("    again: goto again;", "goto"),
    ("    float v; cudaMemcpyAsync(&v, x, 4, cudaMemcpyDeviceToDevice, stream);", "address of host memory"),
    ("    float v; float* p = &v;", "address of host memory"),
])
def test_host_code_does_not_read_tensor_data(body, needle):
    assert_code(with_body(body), "cuda-host-compute", needle)


def test_a_macro_cannot_hide_a_launcher_body():
    launcher = ('#define BODY { float v = x[0]; }\n'
                'extern "C" void peek(const float* x, float* y, cudaStream_t stream) BODY\n')
    assert_code(candidate(launcher=launcher + LAUNCHER), "cuda-host-compute", "peek", "indexes memory")


def test_a_constructors_initialiser_list_is_host_code():
    helper = "struct Peek { float v; Peek(const float* p) : v(p[0]) {} };\n"
    assert_code(candidate(launcher=helper + LAUNCHER), "cuda-host-compute", "Peek", "indexes memory")


def test_query_calls_may_take_addresses():
    body = ("    int device = 0, sms = 0, blocks = 0;\n    cudaGetDevice(&device);\n"
            "    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);\n"
            "    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, softmax_kernel, 256, 0);\n"
            "    cudaFuncSetAttribute(&softmax_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 0);")
    assert reasons(with_body(body)) == []


def test_a_host_device_helper_is_host_code():
    helper = "__host__ __device__ inline float first(const float* p) { return p[0]; }\n"
    assert_code(candidate(launcher=helper + LAUNCHER), "cuda-host-compute", "first", "indexes memory")
    device_only = helper.replace("__host__ ", "")
    assert reasons(candidate(launcher=device_only + LAUNCHER)) == []


# -- host code after the preprocessor, on libclang's parse (host_ast.py) -------------------------------------

PEEK = """#if 0
__device__
#endif
inline float peek(const float* p) {
#ifdef __CUDA_ARCH__
    return p[0];
#else
    return 0.0f;
#endif
}
"""


def test_host_code_is_read_in_nvccs_device_pass_too():
    """`#ifdef __CUDA_ARCH__` in a host function: nvcc's host pass compiles the #else, the emulator
    (and nvcc's device pass) the branch that reads memory; both are read. A __device__ function
    may read there (the control)."""
    assert_code(candidate(launcher=PEEK + LAUNCHER), "cuda-host-compute", "peek: indexes memory in host code")
    assert reasons(candidate(launcher=PEEK.replace("#if 0\n__device__\n#endif\n", "__device__ ") + LAUNCHER)) == []


def test_parsed_host_code_leaves_correct_idioms_alone():
    """What the parse resolves must not refuse what correct launchers write: a cast through an alias,
    a helper with a default template argument, dim3 and make_float4, the constant device-to-device
    kind (the token rule still reads inside `#if 0`)."""
    extra = ("using T = float;\n"
             "template <int BLOCK = 256> static int blocks_for(int n) { return (n + BLOCK - 1) / BLOCK; }\n")
    body = ("    float scale = (T)rows * 2.0f; int nb = blocks_for(rows); dim3 g2 = dim3(nb, 1, 1);\n"
            "    float4 z = make_float4(0.f, 0.f, 0.f, 0.f); (void)z; (void)scale; (void)g2;\n"
            "    cudaMemcpyAsync(y, x, 4, cudaMemcpyDeviceToDevice, stream);")
    assert reasons(with_body(body, extra)) == []


def test_without_libclang_the_token_rule_judges_alone_and_says_so(monkeypatch):
    from opforge.backends.cuda import host_ast

    def missing():
        raise host_ast.Unavailable("libclang is not available (ImportError: no module named clang)")
    monkeypatch.setattr(host_ast, "_clang", missing)
    host_ast._cached.cache_clear()
    try:
        clean = check_cuda_candidate(candidate(), float32_spec=True)
        hostile = check_cuda_candidate(with_body("    float v = x[0];"), float32_spec=True)
    finally:
        host_ast._cached.cache_clear()
    assert clean.reasons == [] and any("token by token only" in w and "libclang" in w for w in clean.warnings)
    assert any(r.startswith("cuda-host-compute:") and "indexes memory" in r for r in hostile.reasons), hostile.reasons


@pytest.mark.parametrize("extra, where", [
    ("struct Box { friend float peek(const float* p) { return p[0]; } };\n", "peek"),  # a friend defined in a class
    ("static auto peek = [device = 0](const float* p) { return p[device]; };\n", "peek"),  # no __device__ lambda
])
def test_the_parse_finds_host_code_where_it_hides(extra, where):
    from opforge.backends.cuda import host_ast

    (source, _), = check_cuda_candidate(candidate(launcher=extra + LAUNCHER), float32_spec=True).cuda_sources
    assert any(d.startswith(f"{where}: indexes memory") for _, d in host_ast.host_findings(source))
    device = "static auto twice = [] __device__ (float v) { float a[2] = {v, v}; return a[0] + a[1]; };\n"
    (source, _), = check_cuda_candidate(candidate(launcher=device + LAUNCHER), float32_spec=True).cuda_sources
    assert host_ast.host_findings(source) == []


def test_launch_loops_error_checks_and_helpers_pass():
    body = ('    for (int part = 0; part < 2; ++part) softmax_kernel<<<1, 32, 0, stream>>>(x + part, y, cols);\n'
            "    do { if (cudaGetLastError() != cudaSuccess) return; } while (0);\n"
            "    int blocks = cdiv(rows, 4) * 2;")
    helper = "static inline int cdiv(int a, int b) { return (a + b - 1) / b; }\n"
    assert reasons(with_body(body, helper)) == []


# -- the Python side and the format ----------------------------------------------------------------------

def test_python_rules_still_apply_and_the_cuda_imports_only_for_cuda():
    assert_code(candidate(python="import os\n" + PYTHON), "forbidden-import", "os")
    triton = check_source(candidate(), float32_spec=True).reasons  # the default backend: unchanged
    assert any(r.startswith("forbidden-import: opforge.cuda") for r in triton)
    assert any(r.startswith("no-kernel") for r in triton)
    assert not any(r.startswith("no-kernel") for r in check_source(
        candidate(), float32_spec=True, extra_imports=CUDA_IMPORTS, kernels_required=False).reasons)


@pytest.mark.parametrize("python, needle", [
    (PYTHON.replace("load_cuda(CUDA_SRC)", "load_cuda(CUDA_SRC + '')"), "string literal"),
    (PYTHON.replace("_lib = load_cuda(CUDA_SRC)", "lc = load_cuda\n_lib = lc(CUDA_SRC)"), "direct call"),
    ("CUDA_SRC = CUDA_SRC.replace('a', 'b')\n" + PYTHON, "string literal"),
    (PYTHON.replace("_lib = load_cuda(CUDA_SRC)", "_lib = None"), "no load_cuda"),
])
def test_format_the_source_must_be_a_literal_handed_to_load_cuda(python, needle):
    assert_code(candidate(python=python), "cuda-format", needle)


def test_format_needs_a_kernel_and_a_launcher():
    assert_code(candidate(kernel="#include <cuda_runtime.h>\n"), "cuda-format", "no __global__ kernel")
    assert_code(candidate(launcher=LAUNCHER.replace('extern "C" ', "")), "cuda-format", 'no extern "C" launcher')


def test_low_precision_in_a_float32_op():
    half = candidate(kernel="#include <cuda_fp16.h>\n" + KERNEL.replace("float m = -FLT_MAX;",
                                                                        "__half h = __float2half(1.f); float m = -FLT_MAX;"))
    assert any(r.startswith("low-precision: uses __half") for r in reasons(half))
    assert reasons(half, float32=False) == []


def test_a_variable_named_half_is_no_half_type():
    """Low precision is judged on the parse's types, not on the spelling: a float32 kernel's local
    `int half` passes (in opforge's format and in load_inline's), the type half beside it does not."""
    local = KERNEL.replace("float m = -FLT_MAX;", "int half = blockDim.x / 2; float m = -FLT_MAX + 0 * half;")
    assert reasons(candidate(kernel=local)) == []
    assert reasons(inline(INLINE_CUDA.replace("int idx =", "int half = 1; int idx = half - 1 +"))) == []
    typed = "#include <cuda_fp16.h>\n" + local + "__device__ float rounded(float v) { half h = __float2half(v); return v; }\n"
    assert_code(candidate(kernel=typed.replace("__float2half(v)", "h")), "low-precision", "uses the type half")
    assert_code(candidate(kernel=typed), "low-precision", "__float2half")
    fp8 = KERNEL.replace("float m = -FLT_MAX;", "int __nv_fp8_e4m3 = 1; float m = -FLT_MAX + 0 * __nv_fp8_e4m3;")
    assert reasons(candidate(kernel=fp8)) == []  # a type the parse's prelude does not declare is a type still:
    assert_code(candidate(kernel=fp8 + "__device__ float q(float v) { __nv_fp8_e4m3 h = v; return v; }\n"),
                "low-precision", "uses the type __nv_fp8_e4m3")


# -- KernelBench's load_inline ----------------------------------------------------------------------------

INLINE_CUDA = r'''
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void add_kernel(const float* a, const float* b, float* out, int size) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < size) out[idx] = a[idx] + b[idx];
}

torch::Tensor add_cuda(torch::Tensor a, torch::Tensor b) {
    auto size = a.numel();
    auto out = torch::empty_like(a);
    const int block_size = 256;
    const int num_blocks = (size + block_size - 1) / block_size;
    add_kernel<<<num_blocks, block_size, 0, at::cuda::getCurrentCUDAStream()>>>(
        a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), size);
    return out;
}
'''


def inline(cuda: str = INLINE_CUDA, kwargs: str = 'extra_cflags=["-O3"], extra_ldflags=[""]') -> str:
    return ("import torch\nfrom torch.utils.cpp_extension import load_inline\n\n"
            f'add_source = r"""{cuda}"""\n'
            'add_cpp = "torch::Tensor add_cuda(torch::Tensor a, torch::Tensor b);"\n'
            'add = load_inline(name="add", cpp_sources=add_cpp, cuda_sources=add_source,\n'
            f'                 functions=["add_cuda"], verbose=False, {kwargs})\n\n\n'
            "class ModelNew(torch.nn.Module):\n"
            "    def __init__(self):\n        super().__init__()\n        self.add = add\n\n"
            "    def forward(self, a, b):\n        return self.add.add_cuda(a, b)\n")


def test_load_inline_format_is_recognised():
    result = check_cuda_candidate(inline(), float32_spec=True)
    assert result.reasons == [] and result.format == "load_inline"
    assert result.kernels == ["add_kernel"] and [line for _, line in result.cuda_sources] == [4]


@pytest.mark.parametrize("change, code, needle", [
    (("auto out = torch::empty_like(a);", "auto out = torch::matmul(a, b);"), "cuda-forbidden-call", "torch::matmul"),
    (("auto size = a.numel();", "auto size = a.numel(); auto s = a.sum();"), "cuda-host-compute", ".sum()"),
    (("if (idx < size)", "auto t = torch::empty_like(0); if (idx < size)"), "cuda-forbidden-call", "device code"),
    (("auto size = a.numel();", "auto size = a.numel(); float v = a.data_ptr<float>()[0];"), "cuda-host-compute",
     "indexes memory"),
    (("return out;", "return out * 2;"), "cuda-host-compute", "tensor arithmetic"),
    (("auto out = torch::empty_like(a);", "auto out = torch::empty_like(a); out = a + b;"), "cuda-host-compute",
     "tensor arithmetic"),
])
def test_load_inline_host_code_only_allocates_and_launches(change, code, needle):
    assert_code(inline(INLINE_CUDA.replace(*change)), code, needle)


@pytest.mark.parametrize("kwargs, needle", [
    ('extra_ldflags=["-lcublas"]', "extra_ldflags"),
    ('extra_cflags=["-DX=1"]', "extra_cflags"),
    ('extra_include_paths=["/etc"]', "extra_include_paths"),
    ('build_directory="/tmp/x"', "build_directory"),
])
def test_load_inline_build_options_are_refused(kwargs, needle):
    assert_code(inline(kwargs=kwargs), "cuda-format", needle)


def test_load_inline_fast_math_is_a_warning():
    result = check_cuda_candidate(inline(kwargs='extra_cuda_cflags=["--use_fast_math"]'), float32_spec=True)
    assert result.reasons == [] and any("--use_fast_math" in w for w in result.warnings)


QUALIFIED = inline().replace("add = load_inline(", "add = torch.utils.cpp_extension.load_inline(")


@pytest.mark.parametrize("imports", ["from torch.utils.cpp_extension import load_inline\n",
                                     "import torch.utils.cpp_extension\n", ""])
def test_load_inline_spelt_in_full_is_load_inline(imports):
    """`torch.utils.cpp_extension.load_inline(...)`, as many KernelBench answers write it: the same
    format and rules as the imported name."""
    source = QUALIFIED.replace("from torch.utils.cpp_extension import load_inline\n", imports)
    result = check_cuda_candidate(source, float32_spec=True)
    assert result.reasons == [] and result.format == "load_inline" and result.kernels == ["add_kernel"]


@pytest.mark.parametrize("change, code, needle", [
    (("torch.utils.cpp_extension.load_inline(", "torch.utils.cpp_extension.load("), "forbidden-attribute",
     "leads only to torch.utils.cpp_extension.load_inline"),  # load builds from files
    (("add = torch.utils.cpp_extension.load_inline(", "d = torch.utils.data\nadd = torch.utils.cpp_extension.load_inline("),
     "forbidden-attribute", "torch.utils.data"),
    (("add = torch.utils.cpp_extension.load_inline(", "f = torch.utils.cpp_extension.load_inline\nadd = f("),
     "cuda-format", "used other than in a direct call"),
    (("add = torch.utils.cpp_extension.load_inline(", "print(torch.utils)\nadd = torch.utils.cpp_extension.load_inline("),
     "forbidden-attribute", "torch.utils used as a value"),
])
def test_load_inline_spelt_in_full_opens_nothing_else(change, code, needle):
    assert_code(QUALIFIED.replace(*change), code, needle)


def test_load_inline_functions_must_be_defined():
    assert_code(inline().replace('functions=["add_cuda"]', 'functions=["other"]'), "cuda-format", "other")

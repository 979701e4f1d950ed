"""The tables the AscendC static checks read: which AscendC names kernel code may call, which headers a
project may include, which host and system calls are refused, and the element sizes of its types.

The API names are those of Huawei's "Ascend C API reference" (CANN 8.x), grouped as it groups them:
memory and pipeline objects, data movement, vector arithmetic, reductions, synchronisation, the
high-level (matmul, softmax, norm) library and the tiling macros. A name outside these and the
project's own functions is refused (ascendc-api), so a candidate cannot reach something a reader of
this table has not seen; adding a real API is one line here.
"""
from __future__ import annotations

# -- memory and pipeline: objects, and the methods called on them ----------------------------------
TYPES = frozenset("""
TPipe TQue TQueBind TBuf TBufPool GlobalTensor LocalTensor TPosition QuePosition TEventID HardEvent
DataCopyParams DataCopyExtParams DataCopyPadParams DataCopyPadExtParams DataCopyEnhancedParams Nd2NzParams
Nz2NdParamsFull BinaryRepeatParams UnaryRepeatParams GatherMaskParams GatherRepeatParams BrcbRepeatParams
LoadData2DParams LoadData3DParamsV2 MmadParams FixpipeParamsV220 ShapeInfo SliceInfo CopyRepeatParams
ReduceRepeatParams TransDataTo5HDParams TransposeParamsExt MrgSort4Info MrgSortSrcList SortParams
CMPMODE SELMODE RoundMode MaskMode BLOCK_CUBE ONE_BLK_SIZE ONE_REPEAT_BYTE_SIZE DEFAULT_REPEAT_STRIDE
Matmul MatmulType MatmulConfig MatmulImpl TCubeTiling CFG_NORM CFG_MDL
""".split())
METHODS = frozenset("""
InitBuffer AllocTensor EnQue DeQue FreeTensor Get GetWithOffset SetGlobalBuffer GetValue SetValue GetSize
SetSize GetLength GetPhyAddr ReinterpretCast Reset Destroy InitBufPool AllocEventID ReleaseEventID FetchEventID
VacantInQue HasTensorInQue GetTensorCountInQue HasIdleBuffer SetL2CacheHint SetShapeInfo GetShapeInfo SetUserTag
GetUserTag SetAddrWithOffset SetBufferLen GetBufferLen GetPosition
Init SetTensorA SetTensorB SetBias ClearBias IterateAll Iterate GetTensorC End SetOrgShape SetSingleShape SetTail
SetWorkspace SetQuantScalar SetQuantVector SetSubBlockIdx SetHF32 IterateBatch WaitIterateAll
""".split())

# -- free functions ------------------------------------------------------------------------------------
DATA_MOVEMENT = frozenset("""
DataCopy DataCopyPad Copy LoadData LoadDataWithTranspose Fixpipe SetFixpipeNz2ndFlag SetFixPipeConfig InitConstValue
Gather Gatherb GatherMask Scatter Brcb Transpose TransData Pad UnPad Broadcast Concat Extract
""".split())
VECTOR = frozenset("""
Add Sub Mul Div Max Min And Or Not Xor AddRelu SubRelu MulAddDst FusedMulAdd FusedMulAddRelu AddDeqRelu
Adds Muls Maxs Mins Ands Ors ShiftLeft ShiftRight LeakyRelu Axpy
Exp Ln Log Log2 Log10 Abs Reciprocal Sqrt Rsqrt Relu Duplicate Cast CastDeq Select Compare CompareScalar GetCmpMask
SetCmpMask Power Sin Cos Tan Tanh Sinh Cosh Asin Acos Atan Asinh Acosh Atanh Erf Erfc Sign Floor Ceil Round Trunc
Frac Sigmoid Gelu FasterGelu FasterGeluV2 Silu Swish SwiGLU GeGLU ReGlu Clamp ClampMax ClampMin Arange
ArithProgression CumSum Fmod Lgamma Digamma Where IsFinite Exp2 Expm1 Log1p Cbrt Hypot Lerp Rint
""".split())
REDUCTIONS = frozenset("""
ReduceSum ReduceMax ReduceMin ReduceProd ReduceMean ReduceAll ReduceAny ReduceXorSum WholeReduceSum WholeReduceMax
WholeReduceMin BlockReduceSum BlockReduceMax BlockReduceMin PairReduceSum RepeatReduceSum GetReduceMaxMinCount
GetReduceRepeatMaxMinSpr GetAccVal Sum Mean Sort Sort32 MrgSort MrgSort4 ProposalConcat ProposalExtract TopK
""".split())
HIGH_LEVEL = frozenset("""
Softmax SoftMax SimpleSoftMax SoftmaxFlash SoftmaxFlashV2 SoftmaxGrad LogSoftMax LayerNorm LayerNormGrad RmsNorm
BatchNorm DeepNorm GroupNorm Normalize Dropout Mmad REGIST_MATMUL_OBJ GetTPipePtr
""".split())
SYNC_AND_CORE = frozenset("""
GetBlockIdx GetBlockNum GetSubBlockIdx GetSubBlockNum GetTaskRation PipeBarrier SetFlag WaitFlag SyncAll
CrossCoreSetFlag CrossCoreWaitFlag SetAtomicAdd SetAtomicNone SetAtomicMax SetAtomicMin SetAtomicType
SetVectorMask ResetMask SetMaskNorm SetMaskCount SetDeqScale SetSysWorkspace GetSysWorkSpacePtr GetUserWorkspace
IBSet IBWait DataCacheCleanAndInvalid ICachePreLoad GetProgramCounter
""".split())
TILING_MACROS = frozenset("""
GET_TILING_DATA GET_TILING_DATA_WITH_STRUCT GET_TILING_DATA_MEMBER GET_TILING_DATA_PTR_WITH_STRUCT TILING_KEY_IS
KERNEL_TASK_TYPE_DEFAULT KERNEL_TASK_TYPE REGISTER_TILING_DEFAULT REGISTER_TILING_FOR_TILINGKEY ASSERT
""".split())
# C++ that computes on scalars only: casts, keywords that take parentheses, arithmetic types.
SCALAR = frozenset("""
if for while switch return sizeof alignof decltype static_cast reinterpret_cast const_cast static_assert
half float double bfloat16_t float16_t int8_t uint8_t int16_t uint16_t int32_t uint32_t int64_t uint64_t int
unsigned bool size_t char
""".split())
KERNEL_CALLS = TYPES | METHODS | DATA_MOVEMENT | VECTOR | REDUCTIONS | HIGH_LEVEL | SYNC_AND_CORE | TILING_MACROS | SCALAR

# -- refused calls ----------------------------------------------------------------------------------
# Anywhere (host code too): files, processes, network, environment, dynamic loading, threads.
SYSTEM = frozenset("""
fopen freopen fdopen fread fwrite fclose fgets fputs fscanf fprintf remove rename unlink rmdir mkdir chmod chown
open openat creat read write close lseek pread pwrite mmap munmap mprotect ioctl fcntl dup dup2 pipe
system popen pclose fork vfork execl execlp execle execv execvp execve posix_spawn kill raise ptrace
getenv setenv putenv unsetenv secure_getenv dlopen dlsym dlclose socket connect bind listen accept send recv
sendto recvfrom gethostbyname getaddrinfo pthread_create thread async ifstream ofstream fstream filebuf
ReadFile WriteFile asm __asm__ __asm syscall
""".split())
# Kernel code only: nothing of the host's C library or runtime runs on an AI core.
HOST_ONLY = frozenset("""
printf puts putchar sprintf snprintf malloc calloc realloc free new delete exit abort atexit sleep usleep nanosleep
time clock gettimeofday clock_gettime rand srand memcpy memset memmove strcpy strlen strcmp
""".split())
HOST_PREFIXES = ("std::", "acl", "torch::", "at::", "c10", "pybind11::")
# std:: names kernel code may use: compile-time type traits and constants (no code runs for them on the
# AI core; bisheng is a clang and has them). Any other std:: name is a host library.
STD_COMPILE_TIME = frozenset("""
is_same is_same_v conditional conditional_t enable_if enable_if_t is_floating_point is_floating_point_v is_integral
is_integral_v is_signed is_signed_v is_unsigned is_unsigned_v remove_cv remove_cv_t remove_reference
remove_reference_t decay decay_t integral_constant true_type false_type is_arithmetic is_arithmetic_v
""".split())

# -- includes -----------------------------------------------------------------------------------------
CANN_HEADERS = frozenset("""
kernel_operator.h acl/acl.h register/tilingdata_base.h register/op_def_registry.h tiling/platform/platform_ascendc.h
platform/platform_ascendc.h tiling/tiling_api.h graph/utils/type_utils.h pytorch_npu_helper.hpp
torch_npu/csrc/core/npu/NPUStream.h torch_npu/csrc/framework/OpCommand.h tikicpulib.h lib/matmul_intf.h
""".split())
GENERATED_HEADER = "aclrtlaunch_"  # aclrtlaunch_<kernel>.h: generated by CANN's build for each kernel
SYSTEM_HEADER_PREFIXES = ("torch/", "ATen/", "c10/", "pybind11/")
STD_HEADERS = frozenset("""
algorithm array cassert cfloat climits cmath cstddef cstdint cstdio cstdlib cstring functional initializer_list
iostream limits map memory numeric optional sstream string tuple type_traits unordered_map utility vector
stdint.h stddef.h math.h float.h limits.h
""".split())

# -- element sizes ------------------------------------------------------------------------------------
SIZES = {"half": 2, "float16_t": 2, "bfloat16_t": 2, "float": 4, "double": 8, "int8_t": 1, "uint8_t": 1,
         "int16_t": 2, "uint16_t": 2, "int32_t": 4, "uint32_t": 4, "int64_t": 8, "uint64_t": 8, "int": 4,
         "bool": 1, "char": 1, "size_t": 8}
JSON_TYPES = {"float": "float", "float32": "float", "float16": "half", "half": "half", "bfloat16": "bfloat16_t",
              "int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t", "int32": "int32_t", "int64": "int64_t",
              "bool": "bool"}

TARGET = "ascend910b"  # the SoC opforge verifies for (Atlas A2): an OpDef's AddConfig must name it
LOW_FLOATS = frozenset({"half", "float16_t", "bfloat16_t", "float16", "bfloat16", "fp16", "bf16", "DT_FLOAT16", "DT_BF16"})
FLOAT32 = frozenset({"float", "float32", "DT_FLOAT", "fp32"})
UB_BYTES = 196608  # the 192 KB unified buffer of a 910B-class AI core
DMA_ALIGN = 32  # DataCopy moves whole 32-byte blocks


def base_name(name: str) -> str:
    """`AscendC::Add` -> `Add`; `::AscendC::Std::min` -> `min`."""
    return name.rpartition("::")[2]


def is_ascendc_name(name: str) -> bool:
    return base_name(name) in KERNEL_CALLS

"""Static checks of a CUDA candidate: its Python part, then the C++ it hands to the compiler.

The Python part follows backends/triton/static.py (backend "cuda": it may import `load_cuda` from
opforge.cuda, or KernelBench's `load_inline`). Its C++ must be found without running anything:
`load_cuda(NAME)` with NAME a module-level string literal bound once (opforge's format), or
`load_inline(name=..., cpp_sources=..., cuda_sources=..., functions=[...])` with literal sources
(the KernelBench format); every other use of either helper is refused (`cuda-format`).

The C++ is read as the compiler reads it (cxx.py: lines spliced, comments and literals set apart,
macros expanded) and must keep to these rules, each reason `code: detail (line N)` in the
candidate file's lines (the tables are in static_cxx.py and host_code.py):
- cuda-include: `#include <h>` only for the headers in INCLUDES (plus TORCH_INCLUDES in load_inline
  sources); no quoted or computed includes.
- cuda-pragma: `#pragma unroll`, `nounroll` and `once` only; no `_Pragma`.
- cuda-preprocessor: the directives in DIRECTIVES only (no #embed, #line, #include_next); no token
  pasting (`##` builds names a reader cannot see); conditionals test the source's own macros, and
  `__CUDA_ARCH__` only inside a __device__ or __global__ body (nvcc and the emulator predefine
  different macros, and nvcc defines __CUDA_ARCH__ only in its device pass: code that asks could
  differ between the emulated kernel and the GPU's; no `__has_include` either).
- cuda-forbidden-call: no file, network, process, thread or environment calls (FORBIDDEN_NAMES, named
  anywhere, called or not); no CUDA library (cuBLAS, cuDNN, cuFFT, cuRAND, Thrust, CUB, CUTLASS...),
  driver API (`cu*`) or runtime calls beyond CUDA_CALLS (memcpy only async device-to-device); no
  inline assembly or attributes beyond ATTRIBUTES in host code. PyTorch (`torch::`, `at::`, `c10::`)
  only in load_inline host code, and there only to allocate and launch: TORCH_NAMES and the
  tensor methods in TENSOR_METHODS (sizes, strides, data_ptr, options...), never compute.
- cuda-host-compute: host functions (launchers, helpers, `__host__ __device__` ones, lambdas outside
  any function; their default arguments too) compute launch configurations from scalars and launch
  kernels: no subscripts, `->` or unary `*` (no reading memory), no unary `&` but for CUDA's query
  calls (no copy into a host variable), no loop that launches no kernel, no goto, no callee in
  parentheses (`(memcpy)(...)` calls memcpy), and calls only to this source's functions,
  CUDA_CALLS, HOST_CALLS
  (scalar math, casts) and, in load_inline, the allocation API above, with no operator applied
  to a tensor. A constructor's initialiser list counts as its body. In opforge's format the same
  rule is applied again after `g++ -E` on libclang's parse (host_ast.py: conditionals evaluated,
  casts and callees resolved, calls through function pointers and memcpy kinds other than the
  constant DeviceToDevice refused); without libclang, a warning says the tokens judged alone.
- cuda-format for load_inline's build options: no libraries, include paths or macros (extra_ldflags,
  extra_include_paths empty; extra_cflags/extra_cuda_cflags from an optimisation-flag list), no
  build_directory; `--use_fast_math` is a warning, and `fast_math` keeps float32 ops off the emulator
  (it computes nvcc's default build: IEEE `/`, sinf and expf, no flush to zero).
- cuda-format: the sources are found and readable, and define a `__global__` kernel (and, in
  opforge's format, an `extern "C"` launcher); `_lib.<name>` on a load_cuda library names one of
  its launchers (`_lib.emulator().call(...)` would run kernels the launch log never sees).
- low-precision (float32 ops): no half, bfloat16 or fp8 types or intrinsics, no mma in the C++ (a
  name the source declares itself, `int half`, is judged by the parse's types, not its spelling).
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from opforge.backends.cuda.static_cxx import check_cxx
from opforge.backends.triton.static import check_source
from opforge.backends.triton.static_resolve import Resolver

# What a CUDA candidate's Python may import besides Triton's rules: opforge's launch helper and
# KernelBench's load_inline, by `from M import name` or spelt in full (`torch.utils.cpp_extension.
# load_inline(...)`: the modules on that path lead to nothing else; torch.utils also holds
# cpp_extension.load, which builds from files). This module judges the C++ they are given.
CUDA_IMPORTS = {"opforge.cuda": frozenset({"load_cuda"}),
                "torch.utils.cpp_extension": frozenset({"load_inline"})}

__all__ = ["CudaStatic", "check_cuda_candidate"]

_FLAG = re.compile(r"^(|-O[0-3s]|-std=c\+\+(?:14|17|20)|-lineinfo|--?use_fast_math|-DNDEBUG|-w|"
                   r"--expt-relaxed-constexpr|--extended-lambda|-Xptxas=-v|--ptxas-options=-v)$")
INLINE_KWARGS = frozenset({"name", "cpp_sources", "cuda_sources", "functions", "verbose", "extra_cflags",
                           "extra_cuda_cflags", "extra_ldflags", "extra_include_paths", "with_cuda"})


@dataclass
class CudaStatic:
    reasons: list[str] = field(default_factory=list)  # "code: detail (line N)", like StaticReport
    warnings: list[str] = field(default_factory=list)
    format: str | None = None  # "opforge" | "load_inline" | None (not found)
    cuda_sources: list[tuple[str, int]] = field(default_factory=list)  # (source, its first line in the file)
    kernels: list[str] = field(default_factory=list)  # __global__ functions, in source order
    launchers: list[str] = field(default_factory=list)  # extern "C" host functions (opforge's format)
    fast_math: bool = False  # load_inline asked nvcc for --use_fast_math


@dataclass
class _Source:
    text: str
    first_line: int
    role: str  # "cuda" | "cpp" (load_inline's cpp_sources: host code only)


# -- the Python side: where the C++ is -------------------------------------------------------------

def _module_strings(tree: ast.Module) -> dict[str, ast.Constant]:
    """Module-level names bound exactly once in the whole file, to a string literal."""
    bound: dict[str, int] = {}
    for node in ast.walk(tree):
        names = [node.id] if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load) else \
            [node.arg] if isinstance(node, ast.arg) else \
            [a.asname or a.name for a in node.names] if isinstance(node, (ast.Import, ast.ImportFrom)) else \
            list(node.names) if isinstance(node, (ast.Global, ast.Nonlocal)) else []
        for name in names:
            bound[name.split(".")[0]] = bound.get(name.split(".")[0], 0) + 1
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            if bound.get(node.targets[0].id) == 1:
                found[node.targets[0].id] = node.value
    return found


class _Finder:
    """Every use of load_cuda / load_inline, which must be a direct call with literal sources."""

    def __init__(self, tree: ast.Module):
        self.tree, self.resolver = tree, Resolver(tree, CUDA_IMPORTS)
        self.strings = _module_strings(tree)
        self.reasons: list[str] = []
        self.sources: list[_Source] = []
        self.formats: set[str] = set()
        self.functions: list[str] = []
        self.warnings: list[str] = []
        self.library_calls: set[int] = set()  # id() of each load_cuda / load_inline call
        self.fast_math = False

    def bad(self, detail: str, node: ast.AST) -> None:
        self.reasons.append(f"cuda-format: {detail} (line {getattr(node, 'lineno', '?')})")

    def run(self) -> None:
        calls = {id(n.func): n for n in ast.walk(self.tree) if isinstance(n, ast.Call)}
        for node in ast.walk(self.tree):
            if not isinstance(node, (ast.Name, ast.Attribute)) or not isinstance(node.ctx, ast.Load):
                continue
            helper = next((r.path.rpartition(".")[2] for r in self.resolver.refs(node)
                           if r.path.rpartition(".")[2] in ("load_cuda", "load_inline")), None)
            if helper is None:
                continue
            if id(node) in calls:
                self.library_calls.add(id(calls[id(node)]))
            if id(node) not in calls:
                self.bad(f"{helper} used other than in a direct call", node)
            elif helper == "load_cuda":
                self._load_cuda(calls[id(node)])
            else:
                self._load_inline(calls[id(node)])
        if len(self.formats) > 1:
            self.bad("load_cuda and load_inline in one file", self.tree)

    def _literal(self, node: ast.AST, role: str, what: str, lists: bool = False) -> None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            self.sources.append(_Source(node.value, node.lineno, role))
        elif isinstance(node, ast.Name) and node.id in self.strings:
            value = self.strings[node.id]
            self.sources.append(_Source(value.value, value.lineno, role))
        elif isinstance(node, (ast.List, ast.Tuple)) and lists:  # load_inline takes a list of sources
            for element in node.elts:
                self._literal(element, role, what)
        else:
            self.bad(f"{what} must be a string literal or a module-level name bound once to one, "
                     f"not {ast.unparse(node)[:60]}", node)

    def _load_cuda(self, call: ast.Call) -> None:
        self.formats.add("opforge")
        args = list(call.args) + [k.value for k in call.keywords if k.arg == "source"]
        extra = [k for k in call.keywords if k.arg not in ("source", "name")]
        if len(args) != 1 or len(call.args) > 2 or extra or any(isinstance(a, ast.Starred) for a in call.args):
            return self.bad("load_cuda takes one source (CUDA_SRC) and an optional literal name", call)
        self._literal(args[0], "cuda", "load_cuda's source")

    def _load_inline(self, call: ast.Call) -> None:
        self.formats.add("load_inline")
        order = ("name", "cpp_sources", "cuda_sources", "functions")
        if len(call.args) > len(order) or any(isinstance(a, ast.Starred) for a in call.args) \
                or any(k.arg is None for k in call.keywords):
            return self.bad("load_inline with *args/**kwargs or more than 4 positional arguments", call)
        given = {**dict(zip(order, call.args)), **{k.arg: k.value for k in call.keywords}}
        for key in sorted(set(given) - INLINE_KWARGS):
            self.bad(f"load_inline({key}=...) is not allowed (build_directory, is_standalone...: the "
                     "harness builds where it chooses)", call)
        for key in ("cpp_sources", "cuda_sources"):
            if key in given:
                self._literal(given[key], "cpp" if key == "cpp_sources" else "cuda", f"load_inline's {key}", True)
        if "cuda_sources" not in given:
            self.bad("load_inline without cuda_sources", call)
        self._inline_lists(given, call)

    def _inline_lists(self, given: dict, call: ast.Call) -> None:
        names = given.get("functions")
        if not (isinstance(names, (ast.List, ast.Tuple)) and names.elts and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in names.elts)):
            self.bad("load_inline needs functions=[...] as a list of string literals", call)
        else:
            self.functions += [e.value for e in names.elts]
        for key in ("extra_cflags", "extra_cuda_cflags", "extra_ldflags", "extra_include_paths"):
            value = given.get(key)
            if value is None or isinstance(value, ast.Constant) and value.value is None:
                continue
            flags = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
            for flag in flags:
                text = flag.value if isinstance(flag, ast.Constant) and isinstance(flag.value, str) else None
                if text is None or (text != "" if key in ("extra_ldflags", "extra_include_paths") else
                                    not _FLAG.match(text)):
                    self.bad(f"load_inline {key} may not hold {ast.unparse(flag)[:40]} (no libraries, "
                             "include paths or macros)", flag)
                elif "fast_math" in text:
                    self.fast_math = True
                    self.warnings.append(f"{key} {text}: sinf, expf, logf, powf, sqrtf and `/` become approximate "
                                         "instructions (sinf is 1e-3 off at x = 1e4; x / y is 0 for |y| > 2^126) "
                                         "and denormals flush to zero")


def check_cuda_candidate(py_source: str, *, float32_spec: bool) -> CudaStatic:
    """Every static reason against a CUDA candidate; an empty `reasons` list means it may be built."""
    out = CudaStatic(reasons=list(check_source(py_source, float32_spec=float32_spec, extra_imports=CUDA_IMPORTS,
                                                 kernels_required=False).reasons))
    try:
        tree = ast.parse(py_source)
    except (SyntaxError, RecursionError, ValueError):
        return out  # check_source said why
    finder = _Finder(tree)
    finder.run()
    out.reasons += finder.reasons
    out.warnings += finder.warnings
    out.fast_math = finder.fast_math
    out.format = next(iter(finder.formats)) if len(finder.formats) == 1 else None
    if not finder.formats:
        out.reasons.append("cuda-format: no load_cuda(CUDA_SRC) or load_inline(...) call: the file hands "
                           "no CUDA source to the compiler (line 1)")
    out.cuda_sources = [(s.text, s.first_line) for s in finder.sources if s.role == "cuda"]
    check_cxx(finder.sources, out, float32=float32_spec, inline=out.format == "load_inline",
              functions=finder.functions)
    if out.format == "opforge":
        out.reasons += _library_uses(tree, finder.library_calls, set(out.launchers))
    out.reasons = list(dict.fromkeys(out.reasons))
    return out


def _library_uses(tree: ast.Module, library_calls: set[int], launchers: set[str]) -> list[str]:
    """`_lib.<attribute>` on a library bound by `_lib = load_cuda(...)` names one of its launchers:
    the others (`_lib.emulator().call(...)`, `_lib.device_function`) run kernels the harness's launch
    log never sees. (An alias, `self.lib = _lib`, is allowed: the no-op replay still judges it.)"""
    names = {node.targets[0].id for node in tree.body if isinstance(node, ast.Assign) and len(node.targets) == 1
             and isinstance(node.targets[0], ast.Name) and id(node.value) in library_calls}
    return [f"cuda-format: {node.value.id}.{node.attr}: a CUDA library is used only by calling its launchers "
            f"({', '.join(sorted(launchers)) or 'none'}) (line {node.lineno})"
            for node in ast.walk(tree) if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and node.value.id in names and node.attr not in launchers]

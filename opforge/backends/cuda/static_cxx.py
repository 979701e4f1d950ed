"""The C++ rules of a CUDA candidate's static check (static.py documents them; the tables are here).

Each source is read by cxx.py as the compiler would read it; the rules then look at directives, at
every name (macros expanded, in any position: a function named is a function reachable), and at
host function bodies token by token. Reasons are `code: detail (line N)` in the candidate file.
"""
from __future__ import annotations

import ast
import re

from opforge.backends.cuda import cxx, host_ast
from opforge.backends.cuda.host_code import CUDA_CALLS, LOW_PRECISION, TORCH_ROOTS, HostBody

INCLUDES = frozenset({
    "cuda_runtime.h", "cuda.h", "cuda_fp16.h", "cuda_bf16.h", "cstdint", "stdint.h", "cmath", "math.h",
    "cfloat", "float.h", "climits", "limits.h", "cstddef", "stddef.h", "type_traits", "utility",
    "cuda/std/cstdint", "cuda/std/limits", "cuda/std/type_traits", "cuda/std/cmath", "cuda/std/utility"})
TORCH_INCLUDES = frozenset({"torch/extension.h", "ATen/cuda/CUDAContext.h", "c10/cuda/CUDAStream.h"})
DIRECTIVES = frozenset({"", "include", "define", "undef", "if", "ifdef", "ifndef", "elif", "elifdef",
                        "elifndef", "else", "endif", "pragma", "error", "warning"})
FORBIDDEN_NAMES = frozenset("""
fopen fopen64 freopen fdopen fclose fread fwrite fgets fputs fgetc fputc fscanf fprintf fflush fseek ftell
fileno tmpfile tmpnam mkstemp mkdtemp opendir readdir scandir stat lstat fstat access chmod chown mkdir
rmdir chdir getcwd unlink unlinkat remove rename link symlink truncate ftruncate open openat creat read
write pread pwrite lseek close dup dup2 dup3 pipe pipe2 select poll ioctl fcntl mmap munmap mprotect
madvise brk sbrk fork vfork clone system popen pclose wait waitpid kill exit _exit _Exit abort atexit
quick_exit at_quick_exit signal sigaction raise ptrace prctl setuid setgid chroot syscall execl execle
execlp execv execve execvp execvpe fexecve posix_spawn posix_spawnp socket socketpair connect bind listen
accept accept4 send sendto sendmsg recv recvfrom recvmsg shutdown getaddrinfo gethostbyname inet_addr
dlopen dlmopen dlsym dlvsym dlclose dlerror getenv secure_getenv setenv putenv unsetenv clearenv environ
thread jthread async pthread_create pthread_join ifstream ofstream fstream filebuf basic_ifstream
basic_ofstream basic_fstream filesystem iostream cin FILE""".split())
LIBRARY_PREFIXES = ("cublas", "cudnn", "cufft", "curand", "cusparse", "cusolver", "nccl", "nvrtc", "cutensor",
                    "nvjpeg", "npp", "cupti", "nvml")
LIBRARY_NAMESPACES = frozenset({"thrust", "cub", "cutlass", "cute", "nvcuda", "pybind11", "py", "caffe2",
                                "cooperative_groups"})
TORCH_NAMES = frozenset({"Tensor", "empty", "empty_like", "empty_strided", "zeros", "zeros_like", "TensorOptions",
                         "Device", "ScalarType", "IntArrayRef", "Half", "BFloat16", "getCurrentCUDAStream",
                         "CUDAStream", "DeviceType", "Layout"})
TENSOR_METHODS = frozenset({"numel", "size", "sizes", "stride", "strides", "dim", "data_ptr", "options",
                            "dtype", "scalar_type", "device", "is_contiguous", "is_cuda", "get_device",
                            "element_size", "stream", "defined", "layout"})
# Runtime names refused even unnamed in a call (`auto f = cudaMemcpy;`): host copies, host or managed
# memory, host callbacks, synchronisation, other streams, events and graphs (timing escapes).
CUDA_DENIED = re.compile(r"^cuda(?:Memcpy(?!\w*Async$|DeviceToDevice$|Kind$)\w*|Malloc\w*|Free\w*|Host\w*|"
                         r"LaunchHostFunc|StreamAddCallback|\w*Synchronize|StreamCreate\w*|StreamBeginCapture\w*|"
                         r"Event\w*|Graph\w*|Ipc\w*|SetDevice\w*|DeviceReset|DeviceSetLimit|Import\w*|Export\w*)$")
ATTRIBUTES = frozenset({"aligned", "__aligned__", "unused", "__unused__", "always_inline", "__always_inline__",
                        "noinline", "__noinline__", "packed", "__packed__", "maybe_unused", "likely", "unlikely",
                        "nodiscard", "fallthrough", "noreturn"})
ASM = frozenset({"asm", "__asm__", "__asm"})
CONDITIONALS = frozenset({"if", "ifdef", "ifndef", "elif", "elifdef", "elifndef"})


class _Rules:
    def __init__(self, unit: cxx.Unit, first_line: int, inline: bool, float32: bool, defined: set[str],
                 shadowed: frozenset = frozenset()):
        """`shadowed`: low-precision names the parse found declared by the source (`int half`): the
        parse judges their uses, not the spelling."""
        self.unit, self.first_line, self.inline, self.float32 = unit, first_line, inline, float32
        self.defined, self.shadowed = defined, shadowed
        self.device = {id(t) for f in unit.functions if f.kind != "host" for t in [*f.head, *f.body]}
        self.device_lines = [(f.line, f.body[-1].line) for f in unit.functions if f.kind != "host" and f.body]
        self.found: list[str] = []

    def add(self, code: str, detail: str, line: int) -> None:
        self.found.append(f"{code}: {detail} (line {self.first_line + line - 1})")

    def run(self) -> list[str]:
        for name, rest, line in self.unit.directives:
            self._directive(name, rest, line)
        tokens = self.unit.tokens
        for k, tok in enumerate(tokens):
            self._token(tokens, k, tok)
        for function in self.unit.functions:
            if function.kind == "host":
                HostBody(function, lambda detail, tok: self.add("cuda-host-compute", detail, tok.line),
                         defined=self.defined, inline=self.inline, reported=FORBIDDEN_NAMES).run()
        return self.found

    # -- directives ---------------------------------------------------------------------------------

    def _directive(self, name: str, rest: list[cxx.Token], line: int) -> None:
        words = [t.text for t in rest]
        if name not in DIRECTIVES:
            self.add("cuda-preprocessor", f"#{name} is not allowed", line)
        elif name == "include":
            self._include(rest, line)
        elif name == "pragma" and (not words or words[0] not in ("unroll", "nounroll", "once")):
            self.add("cuda-pragma", f"#pragma {' '.join(words)[:40]}: only unroll, nounroll and once", line)
        if "##" in words:
            self.add("cuda-preprocessor", "token pasting (##) builds names this check cannot read", line)
        if name in CONDITIONALS:
            self._condition(name, rest, line)
        if name == "define":  # a macro never used is still read: it may be the one the compiler uses
            for tok in rest:
                if tok.kind == "id":
                    self._name(tok, host=True, calls=False)

    def _condition(self, name: str, rest: list[cxx.Token], line: int) -> None:
        """A conditional may test the source's own macros, and __CUDA_ARCH__ inside device code;
        any other macro is the compiler's, and nvcc and the emulator define different ones (nvcc
        sets __CUDA_ARCH__ only in its device pass): code that asks could differ between them."""
        own = {r[0].text for n, r, _ in self.unit.directives if n == "define" and r}
        for tok in rest:
            if tok.kind != "id" or tok.text in own or tok.text == "defined":
                continue
            if tok.text == "__CUDA_ARCH__" and any(a <= line <= b for a, b in self.device_lines):
                continue
            where = "outside device code" if tok.text == "__CUDA_ARCH__" else "a macro this source does not define"
            self.add("cuda-preprocessor", f"#{name} tests {tok.text}, {where}: the emulator and nvcc could "
                     "compile different code (only __CUDA_ARCH__ in a __device__ or __global__ body)", line)
            return

    def _include(self, rest: list[cxx.Token], line: int) -> None:
        words = [t.text for t in rest]
        allowed = INCLUDES | (TORCH_INCLUDES if self.inline else frozenset())
        if len(words) >= 3 and words[0] == "<" and words[-1] == ">":
            header = "".join(words[1:-1])
            if header not in allowed:
                self.add("cuda-include", f"#include <{header}> is not an allowed header (cuda_runtime.h, "
                         "cuda_fp16.h, cuda_bf16.h, cstdint, cmath, cfloat... : static_cxx.INCLUDES)", line)
        elif rest and rest[0].kind == "str":
            self.add("cuda-include", f"#include {rest[0].text}: quoted includes are not allowed", line)
        else:
            self.add("cuda-include", f"#include {' '.join(words)[:40]}: a computed include", line)

    # -- every token ----------------------------------------------------------------------------------

    def _token(self, tokens: list[cxx.Token], k: int, tok: cxx.Token) -> None:
        nxt = tokens[k + 1].text if k + 1 < len(tokens) else ""
        if tok.kind == "punct" and tok.text in ("#", "##"):
            self.add("cuda-preprocessor", f"a stray {tok.text!r} outside a directive", tok.line)
        elif tok.kind == "punct" and tok.text == "[" and nxt == "[":
            self._attributes(tokens, k + 1, tok, "[[...]]")
        elif tok.kind == "punct" and tok.text == "[" and k and tokens[k - 1].kind == "id":
            self._extent(tokens, k, tok)
        elif tok.kind == "id":
            host = id(tok) not in self.device
            if tok.text == "__attribute__":
                self._attributes(tokens, k + 1, tok, "__attribute__")
            elif tok.text in ("_Pragma", "__pragma"):
                self.add("cuda-pragma", f"{tok.text}(...) pragmas are not allowed", tok.line)
            elif tok.text in ASM and host:
                self.add("cuda-forbidden-call", "inline assembly in host code", tok.line)
            elif tok.text in ASM and self.float32 and re.search(r"mma|\.f16|\.bf16|tf32|\.e4m3|\.e5m2",
                                                                " ".join(t.text for t in tokens[k:k + 40])):
                self.add("low-precision", "inline assembly with reduced-precision or mma instructions", tok.line)
            self._name(tok, host=host, calls=nxt == "(", call=(tokens, k + 1))
            if host and k and tokens[k - 1].text == "." and nxt in ("(", "<"):
                self._method(tok)

    def _extent(self, tokens: list[cxx.Token], k: int, at: cxx.Token) -> None:
        """`name[<constant>]` past MAX_EXTENT elements: an array that size (initialised, it is
        written out byte by byte) keeps nvcc busy for minutes and g++ writing gigabytes."""
        inside = tokens[k + 1:next((j for j in range(k + 1, min(len(tokens), k + 40)) if tokens[j].text == "]"), k + 1)]
        if inside and all(t.kind == "num" or t.text in _EXTENT_OPS for t in inside):
            value = _constant([re.sub(r"[uUlL]+$", "", t.text) if t.kind == "num" else t.text for t in inside])
            if value is not None and value > MAX_EXTENT:
                self.add("cuda-format", f"an array of {value} elements: allocate large buffers in forward "
                         f"(at most {MAX_EXTENT} elements in the source)", at.line)

    def _attributes(self, tokens: list[cxx.Token], start: int, at: cxx.Token, what: str) -> None:
        if start >= len(tokens) or tokens[start].text not in "([":
            return
        names = [t.text for t in tokens[start:cxx.closing_bracket(tokens, start)] if t.kind == "id"]
        bad = [n for n in names if n not in ATTRIBUTES]
        if bad:
            self.add("cuda-forbidden-call", f"{what} {bad[0]}: only {', '.join(sorted(ATTRIBUTES))}", at.line)

    def _name(self, tok: cxx.Token, *, host: bool, calls: bool, call: tuple = ((), 0)) -> None:
        text = tok.text
        parts = text.strip(":").split("::")
        if any(p in FORBIDDEN_NAMES for p in parts):
            self.add("cuda-forbidden-call", f"{text}: file, network, process, thread and environment calls "
                     "are not allowed (rename a variable of that name)", tok.line)
        elif parts[0] in LIBRARY_NAMESPACES:
            self.add("cuda-forbidden-call", f"{text}: {parts[0]}:: is a library; write the kernel", tok.line)
        elif text.lower().startswith(LIBRARY_PREFIXES):
            self.add("cuda-forbidden-call", f"{text}: CUDA libraries (cuBLAS, cuDNN, cuFFT, cuRAND...) "
                     "are not allowed", tok.line)
        elif re.match(r"^cu[A-Z]", text):
            self.add("cuda-forbidden-call", f"{text}: the CUDA driver API is not allowed", tok.line)
        elif re.match(r"^cuda[A-Z]", text):
            self._runtime(tok, calls, call)
        elif parts[0] in TORCH_ROOTS:
            self._torch(tok, parts, host)
        if self.float32 and LOW_PRECISION.match(parts[-1]) and parts[-1] not in self.shadowed:
            self.add("low-precision", f"uses {text} in a float32 op", tok.line)

    def _runtime(self, tok: cxx.Token, calls: bool, call: tuple) -> None:
        text = tok.text
        if CUDA_DENIED.match(text) or calls and text not in CUDA_CALLS:
            self.add("cuda-forbidden-call", f"{text}: launchers launch kernels, check errors, set kernel "
                     "attributes and clear or copy device memory asynchronously; nothing else", tok.line)
        elif calls and text.startswith("cudaMemcpy"):
            tokens, start = call
            args = tokens[start:cxx.closing_bracket(tokens, start) + 1]
            if not any(t.text == "cudaMemcpyDeviceToDevice" for t in args):
                self.add("cuda-forbidden-call", f"{text} other than device-to-device", tok.line)

    def _torch(self, tok: cxx.Token, parts: list[str], host: bool) -> None:
        if not self.inline:
            self.add("cuda-forbidden-call", f"{tok.text}: opforge's format calls no PyTorch from C++ "
                     "(forward allocates the outputs)", tok.line)
        elif not host:
            if parts[-1] not in ("Half", "BFloat16"):
                self.add("cuda-forbidden-call", f"{tok.text} in device code", tok.line)
        elif not (all(p in TORCH_ROOTS | {"cuda", "detail"} for p in parts[:-1])
                  and (parts[-1] in TORCH_NAMES or re.match(r"^k[A-Z]\w*$", parts[-1]))):
            self.add("cuda-forbidden-call", f"{tok.text}: host code may use PyTorch only to allocate tensors "
                     "and launch kernels", tok.line)

    def _method(self, tok: cxx.Token) -> None:
        if tok.text not in TENSOR_METHODS and tok.text not in self.defined:
            self.add("cuda-host-compute", f".{tok.text}() in host code: tensors are only sized, allocated and "
                     "passed to kernels there", tok.line)


MAX_EXTENT = 1 << 24
_EXTENT_OPS = frozenset({"<<", "*", "+", "-", "(", ")"})


def _constant(words: list[str]) -> int | None:
    """The value of an integer expression of literals, `<<`, `*`, `+`, `-` and parentheses (capped
    at 2**64, so `1 << (1 << 40)` costs nothing), or None where it is not one."""
    try:
        tree = ast.parse(" ".join(words), mode="eval").body
    except (SyntaxError, ValueError):
        return None

    def value(node) -> int | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return min(node.value, 1 << 64)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = value(node.operand)
            return None if inner is None else -inner
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.LShift, ast.Mult, ast.Add, ast.Sub)):
            a, b = value(node.left), value(node.right)
            if a is None or b is None:
                return None
            if isinstance(node.op, ast.LShift):
                return min(a << min(max(b, 0), 64), 1 << 64)
            return min({ast.Mult: a * b, ast.Add: a + b, ast.Sub: a - b}[type(node.op)], 1 << 64)
        return None
    return value(tree)


def check_cxx(sources, out, *, float32: bool, inline: bool, functions: list[str]) -> None:
    """Add every C++ reason (and the kernels and launchers found) to `out`, a CudaStatic."""
    units = []
    for src in sources:
        try:
            units.append((src, cxx.read(src.text)))
        except cxx.CxxError as exc:
            out.reasons.append(f"cuda-format: cannot read the C++ source: {exc} (line {src.first_line + exc.line - 1})")
    defined = {f.name for _, unit in units for f in unit.functions}
    for src, unit in units:
        found = _token_rules(src, unit, inline, float32, defined)
        # The parse (50-100 ms, 1-3 s where it needs the emulator's whole header) where the tokens
        # found nothing else: a candidate refused already gains nothing from it.
        if src.role == "cuda" and not any(not r.startswith("low-precision:") for r in out.reasons + found):
            parsed = _parse(src, out, host_code=not inline)
            if parsed is not None and parsed.declared and any(r.startswith("low-precision:") for r in found):
                found = _token_rules(src, unit, inline, float32, defined, parsed.declared)
            out.reasons += found
            if parsed is not None:
                _parsed_findings(src, parsed, out, float32)
        else:
            out.reasons += found
        kernels = [f.name for f in unit.functions if f.kind == "kernel"]
        launchers = [f.name for f in unit.functions if f.kind == "host" and f.extern_c]
        out.kernels += kernels
        out.launchers += launchers
        if src.role == "cuda" and not inline and not kernels:
            out.reasons.append(f"cuda-format: CUDA_SRC defines no __global__ kernel (line {src.first_line})")
        if src.role == "cuda" and not inline and not launchers:
            out.reasons.append(f'cuda-format: CUDA_SRC defines no extern "C" launcher (line {src.first_line})')
    if inline and units and not out.kernels:
        out.reasons.append("cuda-format: load_inline's cuda_sources define no __global__ kernel (line 1)")
    host = {f.name for _, unit in units for f in unit.functions if f.kind == "host"}
    for name in functions:
        if name not in host:
            out.reasons.append(f"cuda-format: load_inline functions=[{name!r}] names no host function of "
                               "cuda_sources (line 1)")


_HOST_REASON = re.compile(r"^cuda-host-compute: .*\(line (\d+)\)$")


def _token_rules(src, unit, inline: bool, float32: bool, defined: set[str], shadowed: frozenset = frozenset()) -> list[str]:
    try:
        return _Rules(unit, src.first_line, inline, float32, defined, shadowed).run()
    except cxx.CxxError as exc:  # brackets balanced as braces but not as parentheses, say
        return [f"cuda-format: cannot read the C++ source: {exc} (line {src.first_line + exc.line - 1})"]


def _parse(src, out, host_code: bool) -> host_ast.Parsed | None:
    """host_ast's reading of a CUDA source after the preprocessor; without libclang or g++, None and
    a warning that it was read token by token only."""
    try:
        return host_ast.read(src.text, host_code)
    except host_ast.Unavailable as exc:
        out.warnings.append(f"cuda-host-compute: C++ read token by token only ({exc}): code behind the "
                            "preprocessor, casts and callees the tokens cannot tell apart was not judged, and "
                            "a variable named like a half type (half, hadd...) is refused as one")
        return None


def _parsed_findings(src, parsed: host_ast.Parsed, out, float32: bool) -> None:
    """The parse's host compute on lines the token rule left alone, and, in a float32 op, the
    reduced-precision types used under a name the source also declares (`int half`): the token
    rule leaves those names to the parse."""
    seen = {int(m.group(1)) for r in out.reasons if (m := _HOST_REASON.match(r))}
    for line, detail in parsed.host:
        at = src.first_line + line - 1
        if at not in seen:
            out.reasons.append(f"cuda-host-compute: {detail} (line {at})")
    for line, name in parsed.types if float32 else ():
        if name in parsed.declared:
            out.reasons.append(f"low-precision: uses the type {name} in a float32 op (line {src.first_line + line - 1})")

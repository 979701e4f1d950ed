"""Host code of a CUDA_SRC on a real parse: preprocessed by g++, then parsed by libclang.

host_code.py reads host functions token by token from cxx's reading, which does not evaluate
conditionals and guesses casts, kinds and callees from the spelling. So a host function behind
`#if 0 __device__ #endif` read as device code, `(T)*p` with `using T = float;` read as a product,
a callee `make_copy` bound to memcpy, a default template argument naming it, or `cudaMemcpyAsync`
with a computed kind all passed. Here the source goes through what compiles it:
- `g++ -E` (nvcc's host compiler and the emulator's compiler) after host_prelude.py's declarations
  of CUDA's runtime, the qualifiers defined as clang's CUDA attributes: conditionals and macros
  evaluated as they are for the build. Twice when the source names `__CUDA_ARCH__`: without it
  (nvcc's host pass) and with it (nvcc's device pass, and the emulator, which defines it everywhere);
- libclang parses the result as CUDA C++17, host side (`<<<...>>>` is a launch, a kernel's kind
  its attribute); line markers keep CUDA_SRC's lines for the reasons. Where clang errs outside
  device code, the same again with the emulator's whole header (host_prelude.FULL_PRELUDE).
Host code is every function not annotated __global__ or __device__ alone (`__host__ __device__`
included), with its template parameters, default arguments and initialisers, lambdas in it, and
namespace-scope initialisers. Found there is refused as cuda-host-compute: a subscript, a unary `*`,
a member read through a pointer, `&` of a variable (but for CUDA's query calls), `new`, goto, asm,
a loop that launches no kernel, and any call but to this source's functions and lambdas, CUDA's
runtime calls static_cxx allows (`cudaMemcpyAsync` only with the constant
cudaMemcpyDeviceToDevice), HOST_CALLS and dim3/vector constructors. A call through a variable, a
parameter or a template parameter (`make_copy(...)`) calls what no reader sees: refused.

Host code only in opforge's format (CUDA_SRC): load_inline's host code needs PyTorch's headers
(and on a CPU-only PyTorch it never runs here); its sources are parsed for the types only (`int
half` is no half type: static_cxx.py). Without libclang or g++ the caller says so in a warning and only the
token rule applies. Each source's findings are cached by its hash.
"""
from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from opforge.backends.cuda.host_code import CUDA_CALLS, HOST_CALLS, LOW_PRECISION, QUERY_CALLS
from opforge.backends.cuda.host_prelude import FILE, FULL_PRELUDE, INCLUDE, PASSES, PRELUDE, STUBBED, line_map
# Compile-time bombs (hostile_cuda_template_bomb: fib(90) in constexpr, a template 800 deep) cost
# the parse 10 s at clang's defaults; these limits make it 0.4 s (nvcc refuses the bomb anyway).
_CLANG_ARGS = ["-x", "cuda", "--cuda-host-only", "-nocudainc", "-nocudalib", "--cuda-gpu-arch=sm_90", "-std=c++17",
               "-ferror-limit=0", "-w", "-ftemplate-depth=256", "-fconstexpr-depth=64", "-fconstexpr-steps=100000"]
_LIMITS = re.compile(r"maximum depth|exceeded|evaluation steps")
_VECTOR = re.compile(r"^(?:make_)?(?:u?char|u?short|u?int|u?long|u?longlong|float|double)[1-4]$")
_LAUNCH = frozenset({"__cudaPushCallConfiguration", "cudaLaunchKernel"})
_MEMCPY_KIND = {"cudaMemcpyAsync": 3, "cudaMemcpy2DAsync": 6}
_FUNCTIONS = frozenset({"FUNCTION_DECL", "CXX_METHOD", "CONSTRUCTOR", "DESTRUCTOR", "FUNCTION_TEMPLATE",
                        "CONVERSION_FUNCTION"})
_LOOPS = frozenset({"FOR_STMT", "WHILE_STMT", "DO_STMT", "CXX_FOR_RANGE_STMT"})
_WRAPPERS = frozenset({"UNEXPOSED_EXPR", "PAREN_EXPR"})


class Unavailable(RuntimeError):
    """libclang or g++ is missing: the token rule alone judges host code (the caller warns)."""


def _clang():
    try:
        import clang.cindex as cindex
        cindex.Index.create()
    except Exception as exc:  # ImportError, or a wheel whose libclang.so does not load
        raise Unavailable(f"libclang is not available ({type(exc).__name__}: {exc}); pip install libclang") from None
    return cindex


@dataclass(frozen=True)
class Parsed:
    host: tuple[tuple[int, str], ...]  # (line in CUDA_SRC, detail): host compute
    declared: frozenset[str]  # low-precision names (`half`) the source declares as its own variables or functions
    types: tuple[tuple[int, str], ...]  # (line, name): uses of CUDA's reduced-precision types


def read(source: str, host_code: bool = True) -> Parsed:
    """What the parse finds in CUDA_SRC; Unavailable without libclang or g++. `host_code=False`
    (load_inline's sources: their host code needs PyTorch's headers, which this parse stubs): only
    the names declared and the types used; the token rule judges their host code."""
    return _cached(hashlib.sha256(source.encode()).hexdigest(), source, host_code)


def host_findings(source: str) -> list[tuple[int, str]]:
    """(line in CUDA_SRC, detail) for each piece of host compute; Unavailable without the tools."""
    return list(read(source).host)


@functools.lru_cache(maxsize=256)
def _cached(digest: str, source: str, host_code: bool) -> Parsed:
    del digest  # the key: a source is parsed once per process
    cindex = _clang()
    if shutil.which("g++") is None:
        raise Unavailable("g++ is not on PATH")
    try:
        _stubs()
    except OSError as exc:  # a read-only temp folder
        raise Unavailable(f"no folder for the empty headers ({exc})") from None
    passes = PASSES if "__CUDA_ARCH__" in source else PASSES[:1]
    with ThreadPoolExecutor(len(passes)) as pool:  # g++ and libclang release the GIL
        found = list(pool.map(lambda arch: _one_pass(cindex, source, arch, host_code=host_code), passes))
    return Parsed(tuple(sorted({f for p in found for f in p.host})), frozenset(n for p in found for n in p.declared),
                  tuple(sorted({t for p in found for t in p.types})))


@functools.lru_cache(maxsize=1)
def _stubs() -> str:
    """A folder of empty headers named STUBBED (the declarations are the prelude's)."""
    base = Path(tempfile.gettempdir()) / f"opforge-cuda-host-stubs-{os.getuid()}"
    for name in STUBBED:
        (base / name).parent.mkdir(parents=True, exist_ok=True)
        (base / name).touch()
    return str(base)


def _one_pass(cindex, source: str, arch: str, full: bool = False, host_code: bool = True) -> Parsed:
    """One preprocessing and parse. Light (the prelude, empty headers) first; where clang reports
    an error outside device code, again with the emulator's whole header (the prelude may lack a
    declaration the code needs: a declaration with an error can vanish from the parse, and its
    host code with it); an error left then is a reason: host code the parse cannot read is not
    judged, and a construct g++ takes and clang does not could hide anything. (The errors of this
    parse's own compile-time limits, _LIMITS, are not: nvcc has its own and reports them.)"""
    prelude, include = (FULL_PRELUDE, str(INCLUDE)) if full else (PRELUDE, _stubs())
    text = f'{prelude}{arch}#line 1 "{FILE}"\n{source}'
    try:
        pre = subprocess.run(["g++", "-E", "-std=c++17", "-x", "c++", "-I", include, "-"], input=text,
                             capture_output=True, text=True, timeout=60)
        if not pre.returncode:
            tu = cindex.Index.create().parse("unit.cu", args=_CLANG_ARGS, unsaved_files=[("unit.cu", pre.stdout)])
    except subprocess.TimeoutExpired:
        return Parsed(((1, "the preprocessor ran past 60 s on this source"),), frozenset(), ())
    except cindex.TranslationUnitLoadError:
        return Parsed(((1, "libclang could not parse this source at all"),), frozenset(), ())
    if pre.returncode and not full:  # a header the prelude's empty ones do not stand for
        return _one_pass(cindex, source, arch, full=True, host_code=host_code)
    if pre.returncode:
        return Parsed((), frozenset(), ())  # an #error, a header not allowed: the include rule or the build says why
    walker = _Walker(line_map(pre.stdout))
    for cursor in tu.cursor.get_children():
        walker.top(cursor)
    errors = [d for d in tu.diagnostics if d.severity >= 3 and d.location.file is not None
              and walker.lines[d.location.line][0] == FILE and not walker.in_device(d.location.line)
              and not _LIMITS.search(d.spelling)]
    if not host_code:
        return Parsed((), *_precision(tu, walker))
    if errors and not full and not all(_hopeless(d.spelling) for d in errors):
        return _one_pass(cindex, source, arch, full=True)
    host = walker.found + [(walker.lines[d.location.line][1], f"host code this check cannot parse ({d.spelling})")
                           for d in errors[:1]]
    return Parsed(tuple(host), *_precision(tu, walker))


def _hopeless(message: str) -> bool:
    """An error about a name the emulator's header does not declare either (`cublasSgemm`): the
    slow parse would stop at it the same way."""
    name = re.search(r"'([A-Za-z_]\w*)'", message)
    return name is not None and name.group(1) not in _full_names()


@functools.lru_cache(maxsize=1)
def _full_names() -> frozenset[str]:
    """Every identifier in the emulator's header as g++ preprocesses it (read once, 0.2 s)."""
    pre = subprocess.run(["g++", "-E", "-std=c++17", "-x", "c++", "-I", str(INCLUDE), "-"], input=FULL_PRELUDE,
                         capture_output=True, text=True, timeout=60)
    return frozenset(re.findall(r"[A-Za-z_]\w*", pre.stdout))


def _precision(tu, walker: "_Walker") -> tuple[frozenset[str], tuple[tuple[int, str], ...]]:
    """The low-precision names (static_cxx.LOW_PRECISION) this source declares itself (`int half =
    n / 2;` is no half type), and where CUDA's reduced-precision types are used as types."""
    declared, types = set(), []
    for c in tu.cursor.walk_preorder():
        kind = c.kind.name
        if kind in ("VAR_DECL", "PARM_DECL", "FIELD_DECL", "FUNCTION_DECL") and LOW_PRECISION.match(c.spelling) \
                and walker.source(c):
            declared.add(c.spelling)
        elif kind == "TYPE_REF" and walker.source(c) and c.referenced is not None and not walker.source(c.referenced):
            name = c.referenced.spelling
            if LOW_PRECISION.match(name):
                types.append((walker.lines[c.location.line][1], name))
    for d in tu.diagnostics:  # a type the prelude does not declare (__nv_fp8_e4m3) is still a type
        unknown = re.match(r"unknown type name '(\w+)'", d.spelling)
        if unknown and LOW_PRECISION.match(unknown.group(1)) and d.location.file is not None \
                and walker.lines[d.location.line][0] == FILE:
            types.append((walker.lines[d.location.line][1], unknown.group(1)))
    return frozenset(declared), tuple(types)


def _spaces(cursor) -> set[str]:
    """CUDA's execution and memory spaces on a declaration: global, device, host, shared, constant."""
    found = {c.kind.name[4:-5].lower() for c in cursor.get_children() if c.kind.name.startswith("CUDA")}
    if cursor.kind.name == "LAMBDA_EXPR":  # `[=] __device__ (...) {`: the attribute before the body
        head = []
        for t in cursor.get_tokens():
            if t.spelling == "{":
                break
            head.append(t.spelling)
        # the attribute's own tokens, not a capture or parameter that happens to be named device
        found |= {head[k + 3] for k in range(len(head) - 3)
                  if head[k:k + 3] == ["__attribute__", "(", "("] and head[k + 3] in ("device", "host")}
    return found


def _is_host(cursor) -> bool:
    spaces = _spaces(cursor)
    return "global" not in spaces and ("device" not in spaces or "host" in spaces)


def _qualified(cursor) -> str:
    parts, c = [], cursor
    while c is not None and c.kind.name != "TRANSLATION_UNIT":
        if c.spelling and c.kind.name not in ("UNEXPOSED_DECL", "LINKAGE_SPEC"):
            parts.append(c.spelling)
        c = c.semantic_parent
    return "::".join(reversed(parts))


def _strip(cursor):
    while cursor.kind.name in _WRAPPERS:
        children = list(cursor.get_children())
        if len(children) != 1:
            return cursor
        cursor = children[0]
    return cursor


def _callee(call) -> str:
    """The name a call is spelt with, resolved or not."""
    return call.spelling or next((c.spelling for c in call.get_children()), "")


def _first_token(cursor) -> str:
    return next((t.spelling for t in cursor.get_tokens()), "")


class _Walker:
    def __init__(self, lines: list[tuple[str, int]]):
        self.lines = lines
        self.found: list[tuple[int, str]] = []
        self.where = ""
        self.query = False  # inside the arguments of one of CUDA's query calls (`cudaGetDevice(&d)`)
        self.device: list[tuple[int, int]] = []  # lines of the unit that device functions span

    def in_device(self, line: int) -> bool:
        return any(a <= line <= b for a, b in self.device)

    def add(self, cursor, detail: str) -> None:
        self.found.append((self.lines[cursor.location.line][1], f"{self.where}: {detail}"))

    def source(self, cursor) -> bool:
        """Whether `cursor` was written in CUDA_SRC (not in a header, not the translator's invokers)."""
        line = cursor.location.line
        where = cursor.location.file
        return where is not None and where.name == "unit.cu" and 0 < line < len(self.lines) and self.lines[line][0] == FILE

    # -- declarations: which code is host code -------------------------------------------------------

    def top(self, cursor) -> None:
        if not self.source(cursor):
            return
        kind = cursor.kind.name
        if kind in ("NAMESPACE", "LINKAGE_SPEC", "UNEXPOSED_DECL", "STRUCT_DECL", "CLASS_DECL", "UNION_DECL",
                    "CLASS_TEMPLATE", "CLASS_TEMPLATE_PARTIAL_SPECIALIZATION", "FRIEND_DECL"):
            for child in cursor.get_children():
                self.top(child)
        elif kind in _FUNCTIONS:
            if _is_host(cursor):
                self.where = cursor.spelling
                self.code(cursor)
            else:
                self.device.append((cursor.extent.start.line, cursor.extent.end.line))
        elif kind in ("VAR_DECL", "FIELD_DECL") and not _spaces(cursor):
            self.where = cursor.spelling  # a namespace-scope initialiser runs on the host, at load
            for child in cursor.get_children():
                self.code(child)

    # -- host code -------------------------------------------------------------------------------------

    def code(self, cursor) -> None:
        kind = cursor.kind.name
        if kind == "LAMBDA_EXPR" and not _is_host(cursor):
            return
        if kind == "ARRAY_SUBSCRIPT_EXPR":
            self.add(cursor, "indexes memory in host code")
        elif kind == "UNARY_OPERATOR":
            self._unary(cursor)
        elif kind == "MEMBER_REF_EXPR":
            self._member(cursor)
        elif kind == "CALL_EXPR":
            self._call(cursor)
        elif kind in _LOOPS:
            self._loop(cursor)
        elif kind in ("GOTO_STMT", "INDIRECT_GOTO_STMT"):
            self.add(cursor, "goto in host code")
        elif kind in ("ASM_STMT", "GCC_ASM_STMT", "MS_ASM_STMT"):
            self.add(cursor, "inline assembly in host code")
        elif kind in ("CXX_NEW_EXPR", "CXX_DELETE_EXPR"):
            self.add(cursor, "allocates host memory (new/delete) in host code")
        outer, self.query = self.query, kind == "CALL_EXPR" and _callee(cursor) in QUERY_CALLS
        for child in cursor.get_children():
            self.code(child)
        self.query = outer

    def _unary(self, cursor) -> None:
        op = _first_token(cursor)
        if op == "*":
            self.add(cursor, "dereferences a pointer in host code (unary *)")
        elif op == "&":
            operand = _strip(next(cursor.get_children(), cursor))
            ref = operand.referenced if operand.kind.name == "DECL_REF_EXPR" else None
            if ref is not None and ref.kind.name in _FUNCTIONS:
                return  # &kernel
            if not self.query:
                self.add(cursor, "takes the address of host memory (unary &): only CUDA's query calls take one")

    def _member(self, cursor) -> None:
        base = next(cursor.get_children(), None)
        if base is not None and base.type.get_canonical().kind.name == "POINTER":
            self.add(cursor, f"reads a member through a pointer in host code (->{cursor.spelling})")

    def _loop(self, cursor) -> None:
        if cursor.kind.name == "DO_STMT":
            cond = _strip(list(cursor.get_children())[-1])
            if cond.kind.name in ("INTEGER_LITERAL", "CXX_BOOL_LITERAL_EXPR") and _first_token(cond) in ("0", "false"):
                return  # do { ... } while (0)
        if not any(self._launches(c) for c in cursor.walk_preorder() if c.kind.name == "CALL_EXPR"):
            self.add(cursor, "a loop in host code that launches no kernel (loops over data belong in a kernel)")

    @staticmethod
    def _launches(call) -> bool:
        return call.spelling in _LAUNCH

    def _call(self, cursor) -> None:
        ref = cursor.referenced
        name = _qualified(ref) if ref is not None else _callee(cursor)
        base = name.rpartition("::")[2]
        if ref is not None and ref.kind.name in ("VAR_DECL", "PARM_DECL", "FIELD_DECL", "TEMPLATE_NON_TYPE_PARAMETER"):
            if not self._closure(ref):
                self.add(cursor, f"calls {base} (a variable, parameter or template parameter: a pointer or "
                                 "reference to a function no reader sees) in host code")
            return
        if ref is not None and self._own(ref):
            return  # this source's function: judged on its own
        if base in _MEMCPY_KIND:
            self._memcpy_kind(cursor, base)
        if self._allowed(ref, name, base):
            return
        self.add(cursor, f"calls {name}() in host code: a launcher computes grid sizes from scalars and launches "
                         "kernels")

    def _allowed(self, ref, name: str, base: str) -> bool:
        if base in _LAUNCH or base in CUDA_CALLS or base in HOST_CALLS or base.startswith("cuda") and ref is None:
            return True  # an unknown cuda* name: static_cxx refuses it by name
        if ref is None:
            return not name  # an implicit call (a conversion) has no name
        if ref.kind.name in ("CONSTRUCTOR", "CONVERSION_FUNCTION", "DESTRUCTOR"):
            owner = ref.semantic_parent.spelling if ref.semantic_parent else ""
            return owner == "dim3" or bool(_VECTOR.match(owner))
        return bool(_VECTOR.match(base))

    def _own(self, ref) -> bool:
        """A function this source defines (clang declares a builtin where it is first called:
        in the source, but with no definition)."""
        definition = ref.get_definition()
        if definition is None and ref.kind.name == "FUNCTION_DECL" and ref.get_num_template_arguments() > 0:
            return self.source(ref)  # a template's specialisation: its pattern is the source's
        return definition is not None and self.source(definition)

    def _closure(self, ref) -> bool:
        """A variable holding one of this source's lambdas (its body is host code read here)."""
        if not self.source(ref):
            return False
        for child in ref.get_children():
            if _strip(child).kind.name == "LAMBDA_EXPR":
                return True
        decl = ref.type.get_canonical().get_declaration()
        return decl is not None and decl.kind.name != "NO_DECL_FOUND" and self.source(decl) \
            and decl.kind.name in ("CLASS_DECL", "STRUCT_DECL", "LAMBDA_EXPR")

    def _memcpy_kind(self, cursor, base: str) -> None:
        args = list(cursor.get_arguments())
        index = _MEMCPY_KIND[base]
        kind = _strip(args[index]) if index < len(args) else None
        if kind is None or kind.kind.name != "DECL_REF_EXPR" or kind.spelling != "cudaMemcpyDeviceToDevice" \
                or kind.referenced is None or kind.referenced.kind.name != "ENUM_CONSTANT_DECL":
            self.add(cursor, f"{base} whose kind is not the constant cudaMemcpyDeviceToDevice (a computed kind "
                             "can be DeviceToHost)")

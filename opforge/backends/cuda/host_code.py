"""Host code of a CUDA candidate: what a launcher (or any function that runs on the host) may do.

A host function computes launch configurations from scalars and launches kernels. It may not read
memory: no subscripts, `->`, unary `*`, no address of a host variable (but for CUDA's query calls),
no loop that launches no kernel, no goto, and it calls only the source's own functions, CUDA's
runtime (static_cxx.py judges which calls), HOST_CALLS (scalar math, casts) and, in load_inline's
host code, the allocation API (static_cxx.py); tensors there are passed on, never operated on.
The body is read token by token from cxx.py's outline; each finding is reported through `report`.
"""
from __future__ import annotations

import re

from opforge.backends.cuda import cxx

# The CUDA runtime calls host code may make, beside those that launch or copy (static_cxx.py, host_ast.py)
CUDA_CALLS = frozenset({
    "cudaGetLastError", "cudaPeekAtLastError", "cudaGetErrorString", "cudaGetErrorName", "cudaFuncSetAttribute",
    "cudaFuncGetAttributes", "cudaFuncSetCacheConfig", "cudaGetDevice", "cudaDeviceGetAttribute",
    "cudaGetDeviceProperties", "cudaOccupancyMaxActiveBlocksPerMultiprocessor", "cudaOccupancyMaxPotentialBlockSize",
    "cudaOccupancyAvailableDynamicSMemPerBlock", "cudaMemsetAsync", "cudaMemset2DAsync", "cudaMemcpyAsync",
    "cudaMemcpy2DAsync", "cudaLaunchKernel"})
# Low-precision type and intrinsic names: refused in a float32 op's C++ (static_cxx.py, host_ast.py)
LOW_PRECISION = re.compile(r"^(?:__)?(?:half2?|nv_bfloat162?|bfloat162?|nv_fp8\w*|nv_fp6\w*|nv_fp4\w*|"
                           r"float2half\w*|float2bfloat16\w*|hadd2?|hmul2?|hfma2?|hsub2?|hdiv|h2?exp|h2?log|"
                           r"h2?sqrt|h2?rsqrt|wmma|mma|Half|BFloat16)$")


TORCH_ROOTS = frozenset({"torch", "at", "c10"})
TORCH_MACROS = re.compile(r"^(TORCH_CHECK\w*|AT_DISPATCH_\w+|C10_CUDA_KERNEL_LAUNCH_CHECK|C10_CUDA_CHECK)$")
HOST_CALLS = frozenset({
    "min", "max", "std::min", "std::max", "abs", "std::abs", "fabs", "fabsf", "ceil", "ceilf", "floor", "floorf",
    "std::ceil", "std::floor", "sqrt", "sqrtf", "std::sqrt", "log2", "log2f", "std::log2", "fmin", "fmax",
    "fminf", "fmaxf", "printf", "dim3", "static_cast", "const_cast", "reinterpret_cast"})
KEYWORDS = frozenset("""if for while switch return case else do sizeof alignof decltype noexcept typeid
catch throw new delete defined __launch_bounds__ __attribute__ alignas static_assert template typename
operator""".split())
TYPE_WORDS = frozenset("""int float double char short long unsigned signed bool void const volatile auto
size_t half __half __nv_bfloat16 dim3 float2 float4 int2 int4 uint2 uint4""".split())
# The runtime calls that take the address of a host variable (an out-parameter, or a kernel's address).
QUERY_CALLS = frozenset({"cudaGetDevice", "cudaDeviceGetAttribute", "cudaGetDeviceProperties", "cudaFuncGetAttributes",
                         "cudaFuncSetAttribute", "cudaFuncSetCacheConfig", "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
                         "cudaOccupancyMaxPotentialBlockSize", "cudaOccupancyAvailableDynamicSMemPerBlock"})
_TENSOR_NEIGHBOURS = frozenset({".", ",", "(", ")", ";", "=", "{", "}", "&", "return", "const"})
_ONCE = {"0", "false"}  # `do { ... } while (0)`: the macro idiom runs its body once
_OPERAND_OF = ("sizeof", "alignof", "__alignof__", "decltype", "alignas", "noexcept")  # `(T)` there is no cast
_CONTROL = frozenset({"if", "while", "for", "switch", "catch", *_OPERAND_OF})  # `if (c) (void)f();`: no call


def is_type(name: str, extra: set[str]) -> bool:
    return name in TYPE_WORDS or name.endswith("_t") or name in extra


def _default(param: list[cxx.Token]) -> list[cxx.Token]:
    """The default value of a parameter (the tokens after its top-level `=`), else nothing."""
    depth = 0
    for k, t in enumerate(param):
        depth += (t.text in "([{<") - (t.text in ")]}>") if t.kind == "punct" else 0
        if t.text == "=" and t.kind == "punct" and depth == 0:
            return param[k + 1:]
    return []


def _template_params(head: list[cxx.Token]) -> set[str]:
    return {head[k + 1].text for k, t in enumerate(head[:-1]) if t.text in ("typename", "class")}


class HostBody:
    """A host function's body: launch configuration from scalars and kernel launches, nothing that
    reads memory or computes over data (see static.py)."""

    def __init__(self, function: cxx.Function, report, *, defined: set[str], inline: bool, reported: frozenset):
        """`report(detail, token)` records a finding; `defined`: the source's functions; `reported`:
        names already refused elsewhere (not reported again as calls)."""
        self.f, self.report, self.defined, self.inline, self.reported = function, report, defined, inline, reported
        # a constructor's initialiser list and the default arguments run on the host too (the
        # defaults in every caller, `float v = gx[gi]`): read with the body
        defaults = [t for p in function.params for t in [*_default(p), cxx.Token("punct", ";", function.line)]]
        self.body = [*defaults, *function.tail, cxx.Token("punct", ";", function.line), *function.body]
        self.types = _template_params(function.head)
        self.tensors = self._tensor_names() if inline else set()
        self.locals = self._local_names()

    def add(self, detail: str, tok: cxx.Token) -> None:
        self.report(f"{self.f.name}: {detail}", tok)

    def run(self) -> None:
        for k, tok in enumerate(self.body):
            if tok.text in self.tensors and tok.kind == "id":
                self._tensor_use(k, tok)
            if tok.kind == "punct":
                self._punct(k, tok)
            elif tok.text in ("for", "while", "do"):
                self._loop(k, tok)
            elif tok.text == "goto":
                self.add("goto in host code", tok)
            elif k + 1 < len(self.body) and self.body[k + 1].text == "(":
                self._call(k, tok)

    def _prev(self, k: int) -> cxx.Token | None:
        return self.body[k - 1] if k else None

    def _punct(self, k: int, tok: cxx.Token) -> None:
        body = self.body
        if tok.text == "[" and not self._lambda_or_attribute(k):
            self.add(f"indexes memory in host code ({self._prev(k).text if k else ''}[...])", tok)
        elif tok.text == "->":
            self.add("reads a member through a pointer in host code (->)", tok)
        elif tok.text == "*" and self._unary(k):
            self.add("dereferences a pointer in host code (unary *)", tok)
        elif tok.text == "&" and self._unary(k) and not self._address_ok(k):
            self.add("takes the address of host memory (unary &): only CUDA's query calls take one", tok)
        elif tok.text == "(" and k and body[k - 1].text == ")" and not self._is_cast(k - 1):
            self._parenthesised_callee(k - 1)
        elif tok.text == "(" and k and body[k - 1].text == ">" and body[k - 1].kind == "punct":
            callee = self._template_callee(k - 1)
            if callee is not None:
                self._call(callee, body[callee])

    def _parenthesised_callee(self, close: int) -> None:
        """`(memcpy)(...)`, `(cond ? f : g)(...)`: every name in the parentheses may be the callee."""
        opener = self._opener(close)
        if opener is None or opener and self.body[opener - 1].text in _CONTROL:
            return
        for j in range(opener + 1, close):
            t = self.body[j]
            if t.kind == "id" and self.body[j - 1].text not in (".", "->"):
                self._call(j, t, callee=True)

    def _opener(self, k: int) -> int | None:
        """Index of the innermost bracket still open at `k`."""
        depth = 0
        for j in range(k - 1, -1, -1):
            t = self.body[j]
            if t.kind == "punct" and t.text in ")]}":
                depth += 1
            elif t.kind == "punct" and t.text in "([{":
                if depth == 0:
                    return j
                depth -= 1
        return None

    def _address_ok(self, k: int) -> bool:
        """`[&]` captures, `&kernel`, and out-parameters of the query calls."""
        body, opener = self.body, self._opener(k)
        if opener is not None and body[opener].text == "[":
            return True
        if k + 1 < len(body) and body[k + 1].text in self.defined and body[k + 1].text not in self.locals:
            return True
        return opener is not None and opener > 0 and body[opener].text == "(" and body[opener - 1].text in QUERY_CALLS

    def _local_names(self) -> set[str]:
        """Names this function declares (parameters, `float v = 0, m;`): `&v` is then a variable's
        address even where a kernel is also called v."""
        names = {p[-1].text for p in self.f.params if p and p[-1].kind == "id"}
        body = self.body
        for k, t in enumerate(body[1:], 1):
            after = body[k + 1].text if k + 1 < len(body) else ""
            if t.kind == "id" and after in ("=", ";", ",", "[", "{") and (
                    body[k - 1].kind == "id" and is_type(body[k - 1].text, self.types)
                    or body[k - 1].text in ("*", "&", ",") or after == "="):
                names.add(t.text)
        return names

    def _tensor_names(self) -> set[str]:
        """load_inline: the host function's tensors, parameters or locals (`torch::Tensor t`,
        `auto t = torch::empty(...)`)."""
        names, tokens = set(), [*(t for p in self.f.params for t in p), cxx.Token("punct", ";", 0), *self.body]
        for k, t in enumerate(tokens[:-1]):
            after = [x for x in tokens[k + 1:k + 4] if x.text not in ("&", "const")]
            if t.text.split("::")[-1] == "Tensor" and after and after[0].kind == "id":
                names.add(after[0].text)
            elif t.text == "auto" and [x.text for x in tokens[k + 2:k + 3]] == ["="] and len(tokens) > k + 4:
                value, end = tokens[k + 3].text, tokens[k + 4].text
                if value.split("::")[0] in TORCH_ROOTS or value in names and end == ";":  # not a.numel()
                    names.add(tokens[k + 1].text)
        return names

    def _tensor_use(self, k: int, tok: cxx.Token) -> None:
        body = self.body
        prev, nxt = (body[k - 1] if k else None), (body[k + 1] if k + 1 < len(body) else None)
        for side in (prev, nxt):
            if side is not None and side.kind == "punct" and side.text not in _TENSOR_NEIGHBOURS:
                self.add(f"tensor arithmetic in host code ({side.text} next to {tok.text}): PyTorch computes there",
                         tok)
                return

    def _lambda_or_attribute(self, k: int) -> bool:
        body = self.body
        if k + 1 < len(body) and body[k + 1].text == "[" or k and body[k - 1].text == "[":
            return True  # [[attribute]], checked by static_cxx
        close = cxx.closing_bracket(body, k)
        inside = body[k + 1:close]
        captures = all(t.text in ("&", "=", ",", "this") or t.kind == "id" for t in inside)
        after = body[close + 1].text if close + 1 < len(body) else ""
        before = body[k - 1] if k else None
        starts_expr = before is None or before.kind == "punct" and before.text not in (")", "]") or \
            before.text in ("return",)
        return captures and after in ("(", "{") and starts_expr

    def _unary(self, k: int) -> bool:
        prev = self._prev(k)
        if prev is None:
            return True
        if prev.kind == "punct":
            return prev.text not in (")", "]") or prev.text == ")" and self._is_cast(k - 1)
        return prev.kind == "id" and prev.text in ("return", "case", "throw", "else", "do")

    def _is_cast(self, close: int) -> bool:
        """Whether the `)` at `close` ends a C-style cast `(float)` / `(const T*)`."""
        depth, k = 0, close
        while k >= 0:
            depth += {")": 1, "(": -1}.get(self.body[k].text, 0) if self.body[k].kind == "punct" else 0
            if depth == 0:
                break
            k -= 1
        inside = self.body[k + 1:close]
        before = self.body[k - 1] if k > 0 else None
        if not inside or before is not None and (before.kind in ("id", "num") and before.text not in KEYWORDS
                                                 or before.text in (")", "]", *_OPERAND_OF)):
            return False  # a call's argument list, a parenthesised operand, sizeof(float) * n
        return all(t.text in ("*", "&", "const", "volatile", "unsigned", "signed") or t.kind == "id"
                   and is_type(t.text, self.types) for t in inside)

    def _template_callee(self, close: int) -> int | None:
        depth, k = 0, close
        while k >= 0:
            text = self.body[k].text if self.body[k].kind == "punct" else ""
            depth += {">": 1, ">>": 2, "<": -1}.get(text, 0)
            if depth <= 0:
                return k - 1 if k and self.body[k - 1].kind == "id" else None
            k -= 1
        return None

    def _loop(self, k: int, tok: cxx.Token) -> None:
        body = self.body
        if tok.text == "do":
            if k + 1 < len(body) and body[k + 1].text == "{":
                end = cxx.closing_bracket(body, k + 1)
                tail = [t.text for t in body[end + 1:end + 5]]
                if tail[:2] == ["while", "("] and tail[3:4] == [")"] and tail[2] in _ONCE:
                    return
                self._launches(body[k + 1:end], tok)
            return
        if k + 1 >= len(body) or body[k + 1].text != "(":
            return
        close = cxx.closing_bracket(body, k + 1)
        cond = [t.text for t in body[k + 2:close]]
        if tok.text == "while" and (cond and len(cond) == 1 and cond[0] in _ONCE):
            return  # the tail of do { } while (0)
        if close + 1 < len(body) and body[close + 1].text == "{":
            block = body[close + 2:cxx.closing_bracket(body, close + 1)]
        else:
            block = body[close + 1:next((j for j in range(close + 1, len(body)) if body[j].text == ";"), len(body))]
        self._launches(block, tok)

    def _launches(self, block: list[cxx.Token], tok: cxx.Token) -> None:
        if not any(t.text in ("<<<", "cudaLaunchKernel") for t in block):
            self.add(f"a {tok.text} loop in host code that launches no kernel (loops over data belong in a "
                     "kernel)", tok)

    def _call(self, k: int, tok: cxx.Token, callee: bool = False) -> None:
        """`callee`: the name stands in parentheses before an argument list, `(name)(...)`."""
        name, prev = tok.text, self._prev(k)
        if tok.kind != "id" or name in KEYWORDS or is_type(name, self.types) or name in self.reported:
            return  # a forbidden name is reported once, as cuda-forbidden-call
        if callee and name in self.locals:
            self.add(f"calls {name}, a local, in host code: a launcher calls this source's functions by name", tok)
            return
        if not callee and prev is not None and prev.kind == "id" and prev.text not in ("return", "case", "else", "do", "throw"):
            return  # `dim3 grid(n)`: a declaration
        if prev is not None and prev.text in (".", "->"):
            return  # a method: static_cxx judges it
        if name in self.defined or name in HOST_CALLS or name.startswith(("cuda", "make_")) \
                or self.inline and (TORCH_MACROS.match(name) or name.strip(":").split("::")[0] in TORCH_ROOTS):
            return
        self.add(f"calls {name}() in host code: a launcher computes grid sizes from scalars and launches "
                 "kernels", tok)

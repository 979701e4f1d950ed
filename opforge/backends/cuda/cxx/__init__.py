"""A reading of CUDA C++ good enough to judge it: the compiler's own first phases, then its outline.

What static.py's rules see must be what nvcc compiles, or a rule can be dodged. So this follows the
translation phases in order: backslash-newlines are spliced first (`fo\\<newline>pen` is `fopen`),
then the text is cut into tokens with comments removed and string, character and raw-string literals
kept whole (a `/* fopen */` hides nothing, a `"fopen("` calls nothing, and `1'000` is a number, not a
character literal hiding the code after it); digraphs are read as what they stand for (`%:include`).
Directives are set apart, object-like and function-like macros are expanded (so a launcher body
cannot hide in a macro), and the expanded text is outlined into functions: kernels (`__global__`),
device functions, and host functions (everything else, `__host__ __device__` included), with their
parameters and bodies. Anything this reading cannot follow is a CxxError, which refuses the file.

tokens.py: phases 1 to 3 (splice, tokenize); macros.py: phase 4 (directives, macro expansion);
outline.py: the functions of the expanded text.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from opforge.backends.cuda.cxx.macros import defines, expand, split_directives
from opforge.backends.cuda.cxx.outline import Function, closing_bracket, lambdas, outline
from opforge.backends.cuda.cxx.tokens import CxxError, Token, join_names, tokenize

__all__ = ["CxxError", "Function", "Token", "Unit", "closing_bracket", "read", "tokenize"]


@dataclass
class Unit:
    tokens: list[Token]  # macros expanded, directives removed
    directives: list[tuple[str, list[Token], int]]  # (name, the rest of its line, line)
    macro_bodies: list[Token] = field(default_factory=list)
    functions: list[Function] = field(default_factory=list)


def read(source: str) -> Unit:
    """Tokens, directives, macros expanded, functions outlined; CxxError when it cannot be followed."""
    try:
        return _read(source)
    except RecursionError:  # thousands of nested namespaces or macros: refused, not half-read
        raise CxxError("nested too deeply to read", 1) from None


def _read(source: str) -> Unit:
    code, found = split_directives(join_names(tokenize(source)))
    defined, bodies = defines(found)
    unit = Unit(expand(code, defined), found, bodies)
    outline(unit.tokens, 0, len(unit.tokens), False, unit.functions)
    unit.functions += lambdas(unit.tokens, unit.functions)
    return unit

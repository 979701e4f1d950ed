"""The rules on the project's code itself (reason codes as in the contract): which calls kernel and
host code may make (ascendc-api, ascendc-forbidden) and which files it may include (ascendc-include);
memory_rules.py has the rules on what its kernels do with memory. Also the findings every rule adds
to and the call-reading helpers the rules share (calls, split_args, open_paren).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from opforge.backends.ascendc import api
from opforge.backends.cuda.cxx import Token

DIRECTIVES = {"include", "define", "undef", "if", "ifdef", "ifndef", "elif", "else", "endif", "pragma", "error"}
DECL_BEFORE = {"return", "else", "case", "co_return", "throw"}


@dataclass
class Findings:
    reasons: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def bad(self, line: str) -> None:
        if line not in self.reasons:
            self.reasons.append(line)

    def warn(self, line: str) -> None:
        if line not in self.warnings:
            self.warnings.append(line)


def calls(tokens: list[Token]):
    """(index, name, member) of every `name(` and `name<...>(`; member: after `.` or `->`."""
    for k, t in enumerate(tokens):
        if t.kind != "id" or k + 1 >= len(tokens):
            continue
        j = k + 1
        if tokens[j].text == "<":
            depth, j = 0, k + 1
            while j < len(tokens) and j - k < 40:
                depth += (tokens[j].text == "<") - (tokens[j].text == ">") - 2 * (tokens[j].text == ">>")
                if tokens[j].text in (";", "{", "}"):
                    break
                j += 1
                if depth <= 0:
                    break
        if j < len(tokens) and tokens[j].text == "(":
            member = k > 0 and tokens[k - 1].text in (".", "->")
            yield k, t.text, member


def split_args(tokens: list[Token], open_at: int) -> list[list[Token]]:
    """The top-level comma-separated arguments of the call whose `(` is at `open_at`."""
    args, current, depth = [], [], 0
    for t in tokens[open_at + 1:]:
        if t.text in ("(", "[", "{") and t.kind == "punct":
            depth += 1
        elif t.text in (")", "]", "}") and t.kind == "punct":
            if depth == 0:
                break
            depth -= 1
        if t.text == "," and depth == 0:
            args.append(current)
            current = []
        else:
            current.append(t)
    return args + [current] if current or args else []


def open_paren(tokens: list[Token], k: int) -> int:
    while tokens[k].text != "(":
        k += 1
    return k


def check_code(code, project) -> Findings:
    """What the project may include and call (memory_rules.py: what its kernels do with memory)."""
    out = Findings()
    _includes(code, project, out)
    own = {f.name.rpartition("::")[2] for f in code.functions} | code.classes
    types = _types(code)
    members = _members(code, types)
    for f in code.functions:
        unit = code.units[f.unit]
        _calls(f, unit, own, out, _variables(f, members, types))
    return out


def _declarators(tokens: list[Token], types: set[str]) -> set[str]:
    """Names declared as variables in these tokens: `T name;`, `T &name`, `T *name = ...`, `T<...> name{...}`
    with T a type (AscendC's, the project's, an arithmetic one)."""
    found = set()
    for k in range(1, len(tokens)):
        t = tokens[k]
        if t.kind != "id" or k + 1 < len(tokens) and tokens[k + 1].text not in (";", "=", ",", "{", "[", "(", ")"):
            continue
        j = k - 1
        while j >= 0 and tokens[j].text in ("*", "&", "&&", "const"):
            j -= 1
        if j >= 0 and (tokens[j].text == ">" or tokens[j].kind == "id" and api.base_name(tokens[j].text) in types):
            found.add(t.text)
    return found


def _types(code) -> set[str]:
    return set(api.TYPES) | set(api.SIZES) | set(code.classes) | set(code.structs) | {"auto", "long", "short", "unsigned"}


def _members(code, types: set[str]) -> dict[str, set[str]]:
    """Class -> the variables its body declares (members)."""
    from opforge.backends.ascendc.units import classes

    found: dict[str, set[str]] = {}
    for unit in code.units:
        for _, name, start, end in classes(unit.tokens):
            found.setdefault(name, set()).update(_declarators(unit.tokens[start + 1:end], types))
    return found


def _variables(f, members: dict[str, set[str]], types: set[str]) -> set[str]:
    """The variables in scope in f: its parameters, its locals and its class's members (a TPipe
    named `pipe` is that object, not POSIX's pipe())."""
    names = {ids[-1] for ids in ([t.text for t in p if t.kind == "id"] for p in f.params) if ids}
    scope = f.scope or f.name.rpartition("::")[0].rpartition("::")[2]
    return names | _declarators(f.body, types) | members.get(scope, set())


# -- calls -------------------------------------------------------------------------------------------

def _calls(f, unit, own: set, out: Findings, variables: set[str] = frozenset()) -> None:
    body = f.body
    for k, t in enumerate(body):
        base = api.base_name(t.text)
        if t.kind == "id" and base in ("asm", "__asm__", "__asm"):
            out.bad(f"ascendc-forbidden: inline assembly in {f.name} ({unit.at(t)})")
        elif t.kind == "id" and base in ("ifstream", "ofstream", "fstream", "filebuf", "thread"):
            out.bad(f"ascendc-forbidden: {t.text} in {f.name}: no files or threads in an AscendC project ({unit.at(t)})")
        elif t.kind == "id" and base in api.SYSTEM and _referenced(body, k) and not (t.text == base and base in variables):
            out.bad(f"ascendc-forbidden: {t.text} in {f.name}: a reference to a file, process, network or "
                    f"environment function (no call needed to smuggle one) ({unit.at(t)})")
        elif (t.kind == "id" and f.aicore and t.text.startswith(api.HOST_PREFIXES)
              and not (t.text.startswith("std::") and t.text[5:] in api.STD_COMPILE_TIME)):
            out.bad(f"ascendc-forbidden: {t.text} in kernel code ({f.name}): host libraries do not run on an AI core "
                    f"({unit.at(t)})")
    for k, name, member in calls(body):
        base = api.base_name(name)
        prev = body[k - 1] if k else None
        if base in api.SYSTEM and not member:
            out.bad(f"ascendc-forbidden: {name} in {f.name}: no file, process, network or environment calls "
                    f"in an AscendC project ({unit.at(body[k])})")
        elif not f.aicore:
            continue
        elif not member and (base in api.HOST_ONLY or name.startswith(api.HOST_PREFIXES)):
            out.bad(f"ascendc-forbidden: {name} in kernel code ({f.name}): host library calls do not run on an "
                    f"AI core ({unit.at(body[k])})")
        elif member and base not in api.METHODS and base not in own:
            out.bad(f"ascendc-api: .{base}() in {f.name} is not in opforge's AscendC API table (api.py) nor a "
                    f"method of the project ({unit.at(body[k])})")
        elif not member and base not in api.KERNEL_CALLS and base not in own and not (
                prev is not None and (prev.kind == "id" and prev.text not in DECL_BEFORE or prev.text == ">")):
            out.bad(f"ascendc-api: {name} in {f.name} is not in opforge's AscendC API table (api.py) nor "
                    f"defined in the project ({unit.at(body[k])})")


CONDITIONALS = ("if", "ifdef", "ifndef", "elif", "else")


def _include_guard(directives, i: int) -> bool:
    """`#ifndef NAME` right before `#define NAME`: a header's include guard."""
    name, rest, _ = directives[i]
    if name != "ifndef" or len(rest) != 1 or i + 1 >= len(directives):
        return False
    after, after_rest, _ = directives[i + 1]
    return after == "define" and bool(after_rest) and after_rest[0].text == rest[0].text and len(after_rest) == 1


def _referenced(body: list, k: int) -> bool:
    """Is body[k] a value use of a function name (`&system`, `= ::system`, `(popen)`) rather than
    a call (judged by the call rule), a member (`x.open`), a declaration or an object's own use
    (`pipe.InitBuffer`, `&pipe`)? Only global or std:: names count."""
    j = k - 1
    if j >= 0 and body[j].text == "::":
        j -= 1
        if j >= 0 and body[j].text == "std":
            j -= 1
        elif j >= 0 and body[j].kind == "id":
            return False  # Other::open: a qualified name of the project's own
    after = body[k + 1].text if k + 1 < len(body) else ""
    if after in ("(", ".", "->", "[", "=", ";") and not (after == ";" and j >= 0 and body[j].text in ("=", "&", "return")):
        return False
    before = body[j].text if j >= 0 else ""
    return before in ("&", "=", "(", ",", "return", "?", ":", "{") and not (before == "&" and after in (")", ","))


def _outside_macros(rest, own: set[str]) -> list[str]:
    """The names a conditional directive tests that the project's own #defines do not give (the
    preprocessor reads an unknown name as 0; the real build may define it), `__has_include` too."""
    names = [t.text for t in rest if t.kind == "id" and t.text not in ("defined", "true", "false")]
    return [n for n in dict.fromkeys(names) if n not in own]


def _includes(code, project, out: Findings) -> None:
    names = {f.name for f in project.files}
    for unit in code.units:
        own_macros = {rest[0].text for name, rest, _ in unit.directives if name == "define" and rest}
        for i, (name, rest, where) in enumerate(unit.directives):
            if name not in DIRECTIVES:
                out.bad(f"ascendc-include: directive #{name or '?'} is not allowed ({where})")
                continue
            if name in CONDITIONALS and not _include_guard(unit.directives, i):
                if not code.preprocessed:
                    out.bad(f"ascendc-include: #{name} (conditional compilation) is not allowed in a source that "
                            f"could not be run through the preprocessor: this checker would read every branch, the "
                            f"compiler only one ({where})")
                    continue
                outside = _outside_macros(rest, own_macros)
                if name in ("if", "ifdef", "ifndef", "elif") and outside:
                    out.bad(f"ascendc-include: #{name} tests {', '.join(outside[:3])}, which the project does not "
                            f"define: the compiler's or CANN's macros decide that branch, not opforge's "
                            f"preprocessor; conditions may test the project's own macros and constants only "
                            f"({where})")
                continue
            if name != "include":
                continue
            if rest and rest[0].kind == "str":
                path, quoted = rest[0].text[1:-1], True
            elif rest and rest[0].text == "<":
                path, quoted = "".join(t.text for t in rest[1:-1]), False
            else:
                out.bad(f"ascendc-include: a computed #include ({where})")
                continue
            ok = path in names if quoted else False
            ok = ok or path in api.CANN_HEADERS or path.startswith(api.GENERATED_HEADER) and path.endswith(".h")
            ok = ok or not quoted and (path in api.STD_HEADERS or path.startswith(api.SYSTEM_HEADER_PREFIXES))
            if not ok or ".." in path or path.startswith("/"):
                out.bad(f"ascendc-include: #include {rest[0].text if quoted else '<' + path + '>'} is neither a "
                        f"project file, a CANN header nor a C++/torch header ({where})")

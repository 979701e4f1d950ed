"""`opforge verify`'s input, checked before torch, Triton, the harness or the registry load (about
5 s): the spec and the kernel exist and are Python, a named backend is one the table knows, and a
kernel given without --backend is not written for another backend. Each refusal is one line (an
OpforgeError: exit 2) and nothing is recorded: a `.cu` file, or a CUDA candidate verified as the
default backend's, is a mistake in the command, not a candidate that failed. Which backend a file
looks written for is each plugin's answer (BackendPlugin.looks_like); nothing here names one.
Light on purpose: the backend table, the plugins' class bodies and `ast`, never torch."""
from __future__ import annotations

import ast
import os
from pathlib import Path

from opforge.backends import BACKENDS, DEFAULT, describe, known
from opforge.harness.errors import CandidateError, OpforgeError, SpecError

SPEC_FORM = " (an op spec is a Python file: class Model, get_inputs(), get_init_inputs())"
SPEC_HELP = ("the op spec: a Python file with class Model (the PyTorch reference), get_inputs() and "
             "get_init_inputs(), e.g. ops/softmax.py")
KERNEL_HELP = ("the candidate: a Python file with class ModelNew, built with Model's arguments, whose forward "
               "launches the backend's kernels")


def check_verify_input(spec: str | Path, kernel: str | Path, backend: str | None = None) -> str:
    """The kernel's source once the command is usable; else raises its one-line error."""
    python_source(spec, "spec", SpecError)
    source = python_source(kernel, "kernel", CandidateError)
    if backend is not None:
        known(backend)  # an unknown name; whether a known one runs here, prepare() says
    else:
        _default_backends(Path(kernel), source)
    return source


def python_source(path: str | Path, role: str, error: type[OpforgeError] = OpforgeError) -> str:
    """A file's text when it is Python that parses; else `error` naming the file (and, for a file in
    another language a backend recognises, where that backend's candidates are shown)."""
    path = Path(path)
    if not path.is_file():
        raise error(f"{path}: {role} file not found")
    try:
        source = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        source = "\x00"
    if "\x00" in source:
        raise error(f"{path}: not a Python file (binary, or not UTF-8 text)")
    try:
        ast.parse(source, str(path))
    except SyntaxError as exc:
        what = _written_for(source) if role == "kernel" else SPEC_FORM
        raise error(f"{path}: not a Python file: line {exc.lineno}: {exc.msg}{what}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise error(f"{path}: not a Python file: it cannot be parsed ({type(exc).__name__})") from None
    return source


def check_verify_argv(argv: list[str]) -> None:
    """check_verify_input for an `opforge [--db PATH] verify ...` command line, read before the parser:
    verify's flags come from a module that imports torch (agents/options.py). Other command lines,
    --help, and those without exactly two files are left to the parser. Every verify flag but --json
    takes a value (tests/test_cli_frictions.py checks that against the parser)."""
    words = argv[2:] if argv[:1] == ["--db"] else argv[1:] if argv[:1] and argv[0].startswith("--db=") else argv
    if words[:1] != ["verify"] or {"-h", "--help"} & set(words):
        return
    files, backend, rest = [], None, iter(words[1:])
    for word in rest:
        if word.startswith("--") and word != "--json":
            name, eq, value = word.partition("=")
            value = value if eq else next(rest, None)
            backend = value if len(name) > 2 and "--backend".startswith(name) else backend  # argparse takes prefixes
        elif word != "--json":
            files.append(word)
    if len(files) == 2:
        check_verify_input(*files, backend)


def verify_epilog() -> str:
    """The end of `opforge verify --help`: the exit codes and a command that works from the repository root."""
    return ("exit: 0 correct, 1 incorrect, 2 bad input, 3 not verifiable here (no step failed, but none that\n"
            "checks the numbers could run on this machine)\n"
            "example, from the repository root (a known-good kernel for the op spec ops/softmax.py):\n"
            f"  opforge verify ops/softmax.py {example_kernel()}\n"
            "a kernel for another backend needs --backend NAME; each backend's examples are in its knowledge/ folder")


def nothing_recorded(db: Path, op: str | None = None) -> str:
    """What `opforge kernels` says for a registry with nothing in it: which registry it read, and what
    to type first (from the repository root)."""
    return (f"no kernels recorded yet{f' for {op!r}' if op else ''} in the registry {db} "
            "(--db, else $OPFORGE_DB, else ./.opforge/opforge.db)\n"
            f"  start with: opforge verify ops/softmax.py {example_kernel()}\n"
            "  or let the agent draft one: opforge run ops/softmax.py  (make demo: the whole offline demo)")


def claims(source: str) -> list[str]:
    """The backends whose plugin says `source` looks written for it, in table order."""
    return [name for name, row in BACKENDS.items() if row.module and describe(name).looks_like(source)]


def example_kernel(backend: str = DEFAULT, op: str = "softmax") -> str:
    """A known-good kernel of `backend` for an op of ops/, as a path to type (relative from here)."""
    return _shown(known(backend).folder / "knowledge" / f"{op}.py")


def _default_backends(path: Path, source: str) -> None:
    """No --backend: the default backend verifies the kernel unless it does not claim it and others do."""
    found = claims(source)
    if not found or DEFAULT in found:
        return
    labels = " or ".join(describe(name).label for name in found)
    flags = " or ".join(f"--backend {name}" for name in found)
    raise CandidateError(f"{path} looks like {labels} code, and without --backend it would be verified as "
                         f"{describe(DEFAULT).label} (the default): add {flags}")


def _written_for(text: str) -> str:
    found = claims(text)
    if not found:
        return " (a candidate is a Python file defining class ModelNew)"
    name = found[0]
    return (f"; it looks like {describe(name).label}: a {name} candidate is a Python file defining ModelNew "
            f"with its kernels inside, e.g. {_shown(known(name).folder / 'knowledge')}/")


def _shown(path: Path) -> str:
    """`path` relative to the working directory when it is below it (what a user types), else absolute."""
    try:
        return os.path.relpath(path) if path.resolve().is_relative_to(Path.cwd().resolve()) else str(path)
    except ValueError:  # another drive
        return str(path)

"""CUDA kernels in the exported library.

A promoted CUDA candidate (opforge's format: `CUDA_SRC` and `from opforge.cuda import load_cuda`)
ships as its op module with that one import pointed at the package's own copy of opforge's CUDA
runtime: `<pkg>/_cuda/` holds backends/cuda/{runtime,signature,toolchain}.py verbatim but
for their imports of each other (`from opforge.backends.cuda import X` becomes
`from <pkg>._cuda import X`), so the library never imports opforge (nor carries its emulator).

A wheel built where nvcc is found also carries each kernel library compiled ahead of time for
the architectures asked (`prebuild`): `<pkg>/_cuda/prebuilt/<sha256 of the source>-sm_<arch>.so`
and an index.json saying which candidate got which architectures (metadata() reports it).
"""
from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import shutil
from pathlib import Path

from opforge.exporter.collect import ExportError, OpExport
from opforge.exporter.hooks import ExportHooks

CUDA_DIR = Path(__file__).resolve().parent
SHIPPED = ("runtime", "signature", "toolchain")  # stdlib + torch + ctypes only (the contract)
CANDIDATE_IMPORT = "opforge.cuda"  # what a candidate imports load_cuda from
ARCHS_ENV = "OPFORGE_CUDA_ARCHS"  # "90,100": the architectures `opforge export --wheel` prebuilds
PREBUILT = "prebuilt"
_SIBLING_IMPORT = re.compile(r"^(\s*)from opforge\.backends\.cuda(\.\w+)? import ", re.M)


def format_problem(source: str) -> str | None:
    """Why a promoted CUDA candidate cannot be exported (None when it can): only opforge's format
    ships, since KernelBench's load_inline form needs a CUDA build of torch's C++ extension
    machinery at import time."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return f"its source does not parse (line {exc.lineno}: {exc.msg})"
    imports = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    names = [(n.module or "") if isinstance(n, ast.ImportFrom) else a.name for n in imports
             for a in (n.names if isinstance(n, ast.Import) else [n])]
    others = sorted({m for m in names if m.split(".")[0] == "opforge" and m != CANDIDATE_IMPORT})
    if others:
        return f"it imports {', '.join(others)}, which the exported library does not carry"
    if CANDIDATE_IMPORT not in names:
        return ("it is not in opforge's CUDA format (`from opforge.cuda import load_cuda`); "
                "a load_inline candidate is not exported")
    return None


def rewrite_candidate(source: str, package: str) -> str:
    """The candidate with `from opforge.cuda import ...` importing `<package>._cuda.runtime`."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == CANDIDATE_IMPORT:
            line = lines[node.lineno - 1]
            lines[node.lineno - 1] = line.replace(f"from {CANDIDATE_IMPORT} ", f"from {package}._cuda.runtime ", 1)
    return "".join(lines)


def runtime_files(package: str) -> dict[str, str]:
    """`<package>/_cuda/*.py`: the runtime, launcher parser and toolchain, imports rewritten."""
    files = {f"{package}/_cuda/__init__.py":
             f'"""opforge\'s CUDA runtime ({", ".join(SHIPPED)}), copied by `opforge export`: do not edit."""\n'}
    for stem in SHIPPED:
        path = CUDA_DIR / f"{stem}.py"
        if not path.is_file():
            raise ExportError(f"{path} is missing: this opforge cannot export CUDA kernels")
        text = _SIBLING_IMPORT.sub(lambda m: f"{m[1]}from {package}._cuda{m[2] or ''} import ",
                                   path.read_text(encoding="utf-8"))
        left = [n for n in ast.walk(ast.parse(text)) if isinstance(n, (ast.Import, ast.ImportFrom))
                and any(name.split(".")[0] == "opforge" for name in _imported(n))]
        if left:
            raise ExportError(f"{path.name} line {left[0].lineno}: imports opforge other than through "
                              "`from opforge.backends.cuda import X`; it cannot be shipped")
        files[f"{package}/_cuda/{stem}.py"] = text
    return files


# What the README's file list says of each shipped runtime file.
_FILES = {
    "__init__.py": "opforge's CUDA runtime, copied (CUDA ops only)",
    "runtime.py": "load_cuda: builds CUDA_SRC for the GPU it meets, calls its launchers (from opforge)",
    "signature.py": "parses the extern \"C\" launchers of CUDA_SRC (from opforge)",
    "toolchain.py": "finds nvcc, builds and caches the shared libraries (from opforge)",
}


def package_files(package: str) -> dict[str, tuple[str, str]]:
    """runtime_files with what each is, for a package that has CUDA kernels."""
    return {path: (text, _FILES[path.rsplit("/", 1)[1]]) for path, text in runtime_files(package).items()}


def _imported(node: ast.Import | ast.ImportFrom) -> list[str]:
    return [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]


def cuda_sources(source: str) -> list[str | None]:
    """The CUDA source each load_cuda call of a candidate builds, where it is a literal (a
    module-level string, or a string constant in the call); None where it is not."""
    tree = ast.parse(source)
    consts = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                consts[node.targets[0].id] = node.value.value
    found = []
    for node in ast.walk(tree):
        func = getattr(node, "func", None)
        name = getattr(func, "id", None) or getattr(func, "attr", None)
        if isinstance(node, ast.Call) and name == "load_cuda" and node.args:
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                found.append(arg.value)
            else:
                found.append(consts.get(arg.id) if isinstance(arg, ast.Name) else None)
    return list(dict.fromkeys(found))


def prebuilt_name(source: str, arch: int) -> str:
    return f"{hashlib.sha256(source.encode()).hexdigest()}-sm_{arch}.so"


def wheel_archs(option: str | None) -> tuple[list[int], str]:
    """(architectures to prebuild, where that list came from): the option, else $OPFORGE_CUDA_ARCHS,
    else this machine's GPUs; none on a machine without one."""
    given = option if option is not None else os.environ.get(ARCHS_ENV)
    if given is not None:
        try:
            archs = sorted({int(a.strip().removeprefix("sm_")) for a in given.split(",") if a.strip()})
        except ValueError:
            raise ExportError(f"CUDA architectures {given!r}: give numbers such as 90,100 (sm_90, sm_100)") from None
        return archs, "--cuda-archs" if option is not None else ARCHS_ENV
    import torch

    if not torch.cuda.is_available():
        return [], "no GPU here"
    caps = {torch.cuda.get_device_capability(i) for i in range(torch.cuda.device_count())}
    return sorted(major * 10 + minor for major, minor in caps), "this machine's GPUs"


def prebuild(project: Path, package: str, ops: list[OpExport], archs: list[int], origin: str) -> list[str]:
    """Compile every CUDA kernel library of `ops` for `archs` (chosen by `origin`) into
    project/<package>/_cuda/prebuilt/ (the wheel's copy of the project); returns notes saying what
    was built and what was not, and why."""
    from opforge.backends.cuda import toolchain

    impls = {i.candidate_sha256: i for op in ops for i in op.impls if i.backend == "cuda"}
    later = "they compile at first use on a machine with nvcc"
    if not impls:
        return []
    if not archs:
        return [f"CUDA kernels not prebuilt: {origin} and no architectures given "
                f"(--cuda-archs 90,100 or {ARCHS_ENV}); {later}"]
    found = toolchain.find_nvcc()
    if found is None:
        return [f"CUDA kernels not prebuilt for sm_{', sm_'.join(map(str, archs))}: nvcc not found; {later}"]
    out = project / package / "_cuda" / PREBUILT
    out.mkdir(parents=True, exist_ok=True)
    index, notes = {}, []
    for sha, impl in sorted(impls.items()):
        built, sources = [], cuda_sources(impl.source)
        if None in sources or not sources:
            notes.append(f"candidate #{impl.candidate_id} not prebuilt: a load_cuda call's source is not a "
                         "string literal; it compiles at first use")
            index[sha] = built
            continue
        for arch in archs:
            try:
                for src in sources:
                    shutil.copyfile(toolchain.build_shared(src, arch, toolchain=found), out / prebuilt_name(src, arch))
                built.append(f"sm_{arch}")
            except toolchain.ToolchainError as exc:
                notes.append(f"candidate #{impl.candidate_id} not prebuilt for sm_{arch}: {exc}")
        index[sha] = built
    (out / "index.json").write_text(json.dumps(index, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    done = sorted({arch for built in index.values() for arch in built})
    return ([f"CUDA kernels prebuilt for {', '.join(done)} ({origin})"] if done else []) + notes


# A second kernel module of an op is `<op>__cuda`, then `<op>__cuda_<arch>`; CPU rows name the emulator.
HOOKS = ExportHooks(cpu_runner="opforge's CUDA emulator", native=True, module_tag="cuda", problem=format_problem,
                    rewrite=rewrite_candidate, files=package_files, wheel_archs=wheel_archs, prebuild=prebuild)

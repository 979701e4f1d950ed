"""Render the op library's files (path -> text) from the grouped ops, with the Jinja2 templates in
exporter/templates and the files each backend's export hooks ship. Nothing here reads a clock, nor
any file but opforge's own (its templates, the runtimes it ships): the same registry state renders
the same bytes."""
from __future__ import annotations

import ast
import hashlib
import json
from typing import Any

import jinja2

from opforge.backends import describe
from opforge.exporter.collect import ExportError, OpExport
from opforge.exporter.hooks import export_hooks, exported

_env = jinja2.Environment(
    loader=jinja2.PackageLoader("opforge.exporter", "templates"), undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True, autoescape=False,
)
RESERVED_PREFIX = ("_export_", "_ExportModule")


def _json(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def split_future(source: str, where: str) -> tuple[list[str], str]:
    """(`from __future__` lines, the rest): future imports must open the generated module."""
    tree = ast.parse(source)
    future = [n for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == "__future__"]
    for node in ast.walk(tree):
        name = getattr(node, "name", None) or (node.id if isinstance(node, ast.Name) else None)
        if isinstance(name, str) and name.startswith(RESERVED_PREFIX):
            raise ExportError(f"{where}: uses the name {name!r}, reserved for the exported entry points")
    lines = source.splitlines(keepends=True)
    drop = {i for n in future for i in range(n.lineno - 1, n.end_lineno)}
    body = "".join(line for i, line in enumerate(lines) if i not in drop).strip("\n")
    return ["".join(lines[n.lineno - 1:n.end_lineno]).rstrip("\n") for n in future], body


def _ret(outputs: int) -> str:
    if outputs == 0:
        return "None"
    if outputs == 1:
        return "_export_torch.Tensor"
    return "tuple[" + ", ".join(["_export_torch.Tensor"] * abs(outputs)) + "]"


UNKNOWN = "unknown"  # level / verified_on of a version recorded before the verification ladder
_PY_TYPES = {"tensor": "_export_torch.Tensor", "int": "int", "float": "float", "bool": "bool"}


def _op_module(op: OpExport, impl, name: str, primary: bool) -> str:
    """ops/<module>.py: a kernel (impl) with the op's entry points after it if `primary`; impl None:
    the entry points alone (an op whose only kernels are Triton-Ascend ones)."""
    hooks = export_hooks(impl.backend) if impl else None
    if impl is None:
        future, body = [], ""
    else:
        future, body = split_future(hooks.rewrite(impl.source, name), f"{op.name} candidate #{impl.candidate_id}")
    names = [sig.name for sig in op.inputs]
    return _env.get_template("op.py.j2").render(
        name=name, op=op, impl=impl, hooks=hooks, primary=primary, future=future, body=body,
        signature=", ".join(f"{s.name}: {_PY_TYPES[s.kind]}" for s in op.inputs),
        arg_names=", ".join(names), returns=_ret(op.outputs), mutates=repr(tuple(op.mutates)),
    )


def _tolerance(impls) -> dict[str, float]:
    """The package's self-check bound: the loosest per-variant tolerance verification applied, at
    least 1e-4 each. The check compares with a plain absolute atol against the fp32 reference alone,
    while verification scaled atol by the output's RMS and allowed NOISE_FACTOR times the reference's
    own float64 error (fp32's RMS term is 1e-5 where that error is measured: as an absolute bound it
    fails a correct 512-deep matmul's elements near zero)."""
    atol = rtol = 0.0
    for impl in impls:
        atol = max([atol] + [v["atol"] or 0.0 for v in impl.variants])
        rtol = max([rtol] + [v["rtol"] or 0.0 for v in impl.variants])
    return {"atol": max(atol, 1e-4), "rtol": max(rtol, 1e-4)}


def op_config(op: OpExport) -> dict[str, Any]:
    """configs/<op>.json: what the runtime checks before running a kernel, per architecture."""
    return {
        "op": op.name,
        "inputs": [{"name": s.name, "kind": s.kind, "dtype": s.dtype, "ranks": list(s.ranks)} for s in op.inputs],
        # Every verified dtype combination (tensors' dtypes in input order, null for scalars): the runtime
        # runs the kernel for these only; "dtype" per input above is the first one's, for display.
        "dtype_sets": [list(t) for t in op.dtype_sets],
        "implements": list(op.implements),  # engine ops it stands for (OPFORGE["implements"]), for adapters
        # Whether float64 inputs make a good fallback probe: float inputs and no float32 weights to clash with.
        "float64_probe": op.stateless and any(s.kind == "tensor" and (s.dtype or "").startswith(("float", "bfloat"))
                                              for s in op.inputs),
        "outputs": op.outputs,
        "sizes": op.sizes_used,
        "init_args": op.init_args,
        "init_size_args": list(op.init_size_args),
        "tolerance": _tolerance(op.impls),
        # In the export's order (Triton before CUDA, GPU-verified before the CPU's): the runtime
        # picks the first that runs on the device, or the fastest where all of those were timed there.
        "kernels": [{"backend": i.backend, "arch": i.arch, "module": i.module, "version": i.version,
                     "candidate_id": i.candidate_id, "config": i.config, "launches": i.launches,
                     "kernel_ms": (i.timings or {}).get("kernel_ms"),
                     "timed_on": i.arch if (i.timings or {}).get("kernel_ms") else None} for i in op.impls],
    }


def op_metadata(op: OpExport) -> dict[str, Any]:
    return {
        "spec_sha256": op.spec_sha256,
        "class": op.class_name,
        "implements": list(op.implements),
        "dtype_sets": [list(t) for t in op.dtype_sets],
        "versions": [{
            "backend": i.backend, "arch": i.arch, "level": i.level or UNKNOWN, "verified_on": i.verified_on or UNKNOWN,
            **({"prebuilt": []} if export_hooks(i.backend).prebuild else {}), "version": i.version, "candidate_id": i.candidate_id,
            "candidate_sha256": i.candidate_sha256, "drafter": i.drafter, "hardware": i.hardware,
            "hardware_name": i.hardware_name, "timings": i.timings,
            "speedup_eager": (i.timings or {}).get("speedup_eager"),
            "speedup_compile": (i.timings or {}).get("speedup_compile"),
        } for i in op.impls],
    }


VERSION_SLOT = "0+opforge.version.slot"


def with_version(files: dict[str, str]) -> dict[str, str]:
    """1.0.0+g<digest of every rendered file>: the version changes exactly when the content does
    (a new kernel, a re-verification, a template fix), so pip never keeps a stale build."""
    digest = hashlib.sha256()
    for path, text in sorted(files.items()):
        digest.update(f"{path}\0{text}\0".encode())
    version = f"1.0.0+g{digest.hexdigest()[:12]}"
    return {path: text.replace(VERSION_SLOT, version) for path, text in files.items()}


def _speed(value: float | None) -> str:
    return f"{value:.2f}x" if value else "not timed"


def _on_cpu(impl) -> bool:
    return impl.arch == "cpu" or impl.hardware.startswith("cpu/")


def _readme_rows(ops: list[OpExport]) -> list[dict[str, Any]]:
    return [{"op": op.name, "version": i.version, "candidate_id": i.candidate_id, "backend": i.backend,
             "level": i.level or UNKNOWN, "verified_on": i.verified_on or UNKNOWN,
             "hardware": (i.hardware_name or i.hardware) + (f" ({export_hooks(i.backend).cpu_runner})" if _on_cpu(i) else ""),
             "kernel_ms": f"{i.timings['kernel_ms']:.4f}" if (i.timings or {}).get("kernel_ms") else "—",
             "eager": _speed((i.timings or {}).get("speedup_eager")),
             "compile": _speed((i.timings or {}).get("speedup_compile"))}
            for op in ops for i in op.impls]


def _example(ops: list[OpExport]) -> dict[str, str] | None:
    if not ops:
        return None
    op = ops[0]
    return {"name": op.name, "class_name": op.class_name, "args": ", ".join(s.name for s in op.inputs)}


def _and(words: list[str]) -> str:
    """Names as prose: `A`, `A and B`, `A, B and C`."""
    return ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else "".join(words)


def _context(ops: list[OpExport], name: str, projects: dict[str, tuple[str, str]]) -> dict[str, Any]:
    """What every template sees: the package, its ops, and what kinds of kernel it carries, asked
    of the backends (native code built by a shipped runtime; kernels for an NPU) rather than named."""
    present = {i.backend for op in ops for i in op.impls}
    npu = {b for b in present if describe(b).accelerator == "NPU"}
    return {"name": name, "env": name.upper(), "ops": ops, "dist_name": name.replace("_", "-"),
            "version": VERSION_SLOT,  # filled in once everything is rendered (with_version)
            "native": any(export_hooks(b).native for b in present), "npu": bool(npu),
            "npu_ops": [op.name for op in ops if any(i.backend in npu for i in op.impls)],
            "project_ops": sorted({path.split("/")[1] for path in projects}),
            "kinds": _and([describe(b).label for b in _shipping(present)])}


def _shipping(present: set[str]) -> list[str]:
    """The module-form backends the package carries, in the table's order: those with kernels in it
    and the one it is built on (always)."""
    return [b for b in exported("module") if b in present or export_hooks(b).base]


def render_files(ops: list[OpExport], name: str, projects: dict[str, tuple[str, str]] | None = None) -> dict[str, str]:
    """Every file of the exported project, keyed by its path relative to the project root;
    `projects`: the project directories' files with what each is (a project-form backend's
    project_files), listed and written too."""
    projects = projects or {}
    ctx = _context(ops, name, projects)
    files: dict[str, tuple[str, str]] = {}

    def add(path: str, text: str, what: str) -> None:
        files[path] = (text, what)

    def tpl(template: str, **extra: Any) -> str:
        return _env.get_template(template).render(**ctx, **extra)

    add("pyproject.toml", tpl("pyproject.toml.j2"), "the package: torch + Triton, vLLM and SGLang plugin entry points")
    add(f"{name}/__init__.py", tpl("package_init.py.j2"), "public API: one function and one module class per op")
    add(f"{name}/_runtime.py", tpl("runtime.py.j2"), "dispatch: verified device/dtype/rank, else the reference, logged once")
    add(f"{name}/check.py", tpl("check.py.j2"), "python -m <package>.check: every op against its reference")
    add(f"{name}/plugins.py", tpl("plugins.py.j2"), "register() for vllm.general_plugins and sglang.srt.plugins")
    add(f"{name}/metadata.json", _json({"package": name, "version": ctx["version"],
                                        "ops": {op.name: op_metadata(op) for op in ops}}),
        "per op: versions, spec hash, hardware verified and timed on, speedups")
    add(f"{name}/ops/__init__.py", tpl("ops_init.py.j2"), "one module per op")
    for backend in _shipping({i.backend for op in ops for i in op.impls}):
        for path, (text, what) in export_hooks(backend).files(name).items():
            add(path, text, what)
    add(f"{name}/references/__init__.py", tpl("references_init.py.j2"), "the op specs, verbatim")
    for op in ops:
        _add_op(add, files, op, name)
    for path, (text, what) in projects.items():
        add(path, text, what)
    add("tests/conftest.py", tpl("conftest.py.j2"), "interpreter on CPU; fallbacks are errors")
    add("tests/test_ops.py", tpl("test_ops.py.j2"), "every op vs its reference, opcheck, dtype fallback")
    listing = sorted([("README.md", "this file")] + [(p, what) for p, (_, what) in files.items()])
    add("README.md", tpl("README.md.j2", rows=_readme_rows(ops), example=_example(ops), files=listing,
                                     width=max(len(p) for p, _ in listing)), "this file")
    return with_version({path: text for path, (text, _) in sorted(files.items())})


def _add_op(add, files: dict, op: OpExport, name: str) -> None:
    """An op's kernel modules (the first carries the entry points, or a module of its own does),
    its config and its spec."""
    if all(impl.module != op.name for impl in op.impls):
        add(f"{name}/ops/{op.name}.py", _op_module(op, None, name, True), f"{op.name}: entry points")
    for impl in op.impls:
        primary = impl.module == op.name
        if f"{name}/ops/{impl.module}.py" not in files:
            add(f"{name}/ops/{impl.module}.py", _op_module(op, impl, name, primary),
                f"{op.name} ({impl.arch}): verified kernel" + (" + entry points" if primary else "")
                + export_hooks(impl.backend).module_note)
    add(f"{name}/configs/{op.name}.json", _json(op_config(op)), f"{op.name}: per-architecture kernels and configs")
    add(f"{name}/references/{op.name}.py", op.spec_source, f"{op.name}: the spec (reference Model)")

"""`opforge export`: the registry's promoted versions -> an installable op library (and its wheel).

Everything is rendered in memory first, so a bad op or name stops the export before a file is
touched; then files are written only where their bytes change, and files a previous export wrote
that are no longer part of the library are removed (a directory opforge did not write is refused).
"""
from __future__ import annotations

import json
import keyword
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from opforge.backends import BACKENDS, describe
from opforge.exporter.collect import ExportError, OpExport, group_ops
from opforge.exporter.hooks import export_hooks, exported
from opforge.exporter.render import render_files
from opforge.registry.promoted import PromotedKernel

MARKER = ".opforge-export"  # lists the files an export wrote, so the next one may replace them
EPOCH = "315532800"  # 1980-01-01, the earliest zip timestamp: wheels build byte-identically


@dataclass(frozen=True)
class ExportedOp:
    name: str
    version: int
    candidate_id: int
    hardware: str
    archs: tuple[str, ...]
    kernels: tuple[str, ...]  # per exported kernel: "triton cpu (emulated)", "cuda sm_90 (profiled)"
    speedup_eager: float | None
    spec_sha256: str


@dataclass(frozen=True)
class ExportResult:
    out: Path
    name: str
    ops: list[ExportedOp]
    wheel: Path | None
    files: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Project directories written beside the package, "ascendc/<op>" (the name of --json's key since
    # AscendC was the first backend exported so)
    ascendc: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self) | {"out": str(self.out), "wheel": str(self.wheel) if self.wheel else None}


# Import names an installed library must not take over (pip would replace the real package); the
# libraries the backends' kernels import (Triton's `triton`) are added from their plugins.
TAKEN = {"torch", "numpy", "vllm", "sglang", "aten", "prims", "opforge", "os", "sys", "typing"}


def taken() -> set[str]:
    return TAKEN.union(*(describe(b).libraries for b in BACKENDS))


def check_name(name: str) -> None:
    if not re.fullmatch(r"[a-z_][a-z0-9_]*", name) or keyword.iskeyword(name):
        raise ExportError(f"--name {name!r}: the import name must be lower_snake_case (e.g. kernels_generated)")
    if name in taken():
        raise ExportError(f"--name {name!r}: that is another package's name; pick one of your own")


def _summary(op: OpExport) -> ExportedOp:
    lead = op.impls[0]
    return ExportedOp(name=op.name, version=lead.version, candidate_id=lead.candidate_id, hardware=lead.hardware,
                      archs=tuple(i.arch for i in op.impls), spec_sha256=op.spec_sha256,
                      kernels=tuple(f"{i.backend} {i.arch} ({i.level or 'level unknown'})" for i in op.impls),
                      speedup_eager=(lead.timings or {}).get("speedup_eager"))


def _inside(out: Path, rel: str) -> Path:
    """out/rel, refusing anything that would leave `out` (an edited marker must not delete elsewhere)."""
    path = out / rel
    if Path(rel).is_absolute() or ".." in Path(rel).parts or out.resolve() not in path.resolve().parents:
        raise ExportError(f"{out / MARKER} lists {rel!r}, outside {out}: refusing to touch it")
    return path


def _previous_files(out: Path) -> list[str]:
    if not out.exists():
        return []
    if not out.is_dir():
        raise ExportError(f"{out} exists and is not a directory")
    marker = out / MARKER
    if marker.is_file():
        try:
            files = json.loads(marker.read_text(encoding="utf-8"))["files"]
        except (ValueError, KeyError, TypeError):
            raise ExportError(f"{marker} is damaged; move {out} aside and export again") from None
        return [str(_inside(out, rel).relative_to(out)) for rel in files]
    if any(out.iterdir()):
        raise ExportError(f"{out} is not empty and was not written by opforge export; choose another --out")
    return []


def write_tree(out: Path, files: dict[str, str]) -> None:
    try:
        _write_tree(out, files)
    except OSError as exc:
        raise ExportError(f"writing {out}: {exc.strerror or exc}: {exc.filename or ''}") from None


def _write_tree(out: Path, files: dict[str, str]) -> None:
    previous = _previous_files(out)
    out.mkdir(parents=True, exist_ok=True)
    # The marker first, listing old and new files: an export interrupted half-way leaves nothing
    # the next one would not recognise as its own.
    _write(out / MARKER, json.dumps({"files": sorted(set(previous) | set(files))}, indent=2) + "\n")
    for rel, text in files.items():
        path = out / rel
        if not (path.is_file() and path.read_bytes() == text.encode("utf-8")):
            _write(path, text)
    for rel in sorted(set(previous) - set(files)):
        path = _inside(out, rel)
        path.unlink(missing_ok=True)
        for parent in path.parents:  # drop directories the removal emptied, never `out` or above
            if parent == out or out not in parent.parents or any(parent.iterdir()):
                break
            parent.rmdir()
    _write(out / MARKER, json.dumps({"files": sorted(files)}, indent=2) + "\n")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.opforge-tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def build_wheel(out: Path, name: str) -> Path:
    """Build the wheel offline (no index, no build isolation) from a clean copy of the project."""
    return _build_wheel(out, name, (), {})[0]


def _build_wheel(out: Path, name: str, ops, archs: dict[str, tuple[list[int], str]]) -> tuple[Path, list[str]]:
    """build_wheel, the kernels of `ops` that a backend prebuilds (CUDA's, where nvcc is) compiled
    into the copy first for `archs` (backend -> wheel_archs()); (the wheel, notes on what was not
    prebuilt)."""
    dist = out / "dist"
    with tempfile.TemporaryDirectory() as tmp:
        src, built = Path(tmp) / "src", Path(tmp) / "dist"
        shutil.copytree(out, src, ignore=shutil.ignore_patterns("dist", "build", "*.egg-info", "__pycache__", MARKER))
        notes = [note for backend, (wanted, origin) in archs.items() if _has(ops, backend)
                 for note in export_hooks(backend).prebuild(src, name, list(ops), wanted, origin)]
        cmd = [sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "--no-build-isolation", "--no-index",
               "-q", "-w", str(built)]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=os.environ | {"SOURCE_DATE_EPOCH": EPOCH})
        wheels = sorted(built.glob(f"{name}-*.whl"))
        if proc.returncode != 0 or not wheels:
            last = (proc.stderr or proc.stdout or "no wheel written").strip().splitlines()[-1]
            raise ExportError(f"building the wheel failed: {last}")
        dist.mkdir(exist_ok=True)
        for old in dist.glob(f"{name}-*.whl"):  # only once the new one exists
            old.unlink()
        return Path(shutil.copy2(wheels[0], dist / wheels[0].name)), notes


def _has(ops, backend: str) -> bool:
    return any(i.backend == backend for op in ops for i in op.impls)


def _wheel_archs(option: str | None) -> dict[str, tuple[list[int], str]]:
    """Per backend that prebuilds its kernels into a wheel: (architectures, where they came from)."""
    return {b: export_hooks(b).wheel_archs(option) for b in exported() if export_hooks(b).prebuild}


def _shipping_problem(pk: PromotedKernel) -> str | None:
    if pk.problem:
        return pk.problem
    hooks = export_hooks(pk.version.backend)
    if hooks is None:
        return f"the {pk.version.backend} backend is not exported by this release"
    return hooks.problem(pk.source)


@dataclass
class Projects:
    """What the project-form backends wrote: files (path -> (text, what)), notes on versions left
    out, and per backend the directories written ("ascendc/<op>")."""

    files: dict[str, tuple[str, str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    dirs: dict[str, dict[str, str]] = field(default_factory=dict)  # backend -> op -> directory


def project_exports(promoted: list[PromotedKernel], package: str) -> Projects:
    """Each op's first exportable promoted version of a project-form backend as a directory beside
    the package, and notes on those left out."""
    done = Projects()
    for pk in promoted:
        backend, op = pk.version.backend, pk.version.op
        where = f"{op}: left out {describe(backend).label} v{pk.version.number} on {pk.version.hardware}"
        earlier = done.dirs.setdefault(backend, {}).get(op)
        if pk.problem:
            done.notes.append(f"{where}: {pk.problem}")
        elif earlier:
            done.notes.append(f"{where}: an earlier {describe(backend).label} version of {op} is exported as {earlier}/")
        else:
            try:
                files = export_hooks(backend).project_files(pk, package)
            except ExportError as exc:
                done.notes.append(f"{where}: {exc}")
                continue
            done.files |= files
            done.dirs[backend][op] = _top(next(iter(files)))
    return done


def _top(path: str) -> str:
    """A project file's directory under the export: "ascendc/<op>/..." -> "ascendc/<op>"."""
    return "/".join(path.split("/")[:2])


def _written(projects: Projects) -> list[str]:
    """The export's note on the project directories written, one per backend."""
    return [f"{describe(b).label} projects written ({export_hooks(b).project_note}): "
            f"{', '.join(d + '/' for d in sorted(projects.dirs[b].values()))}"
            for b in BACKENDS if projects.dirs.get(b)]


def export_library(registry, out: Path, name: str = "kernels_generated", wheel: bool = False,
                   cuda_archs: str | None = None) -> ExportResult:
    """Render the active versions of `registry` that ship as kernel modules (Triton, CUDA and
    Triton-Ascend) into `out` as the package `name`, and each op's version of a project-form backend
    (AscendC) as a project directory beside it (out/ascendc/<op>/, not part of the wheel); with
    `wheel`, build it, kernels a backend prebuilds (CUDA's, where nvcc is) compiled for `cuda_archs`
    ("90,100", else $OPFORGE_CUDA_ARCHS, else this machine's GPUs)."""
    check_name(name)
    archs = _wheel_archs(cuda_archs) if wheel else {}
    promoted = [replace(pk, problem=_shipping_problem(pk)) for pk in registry.promoted_kernels()]
    if not promoted:
        kinds = [describe(b).label for b in exported()]
        raise ExportError(f"nothing to export: no promoted {', '.join(kinds[:-1])} or {kinds[-1]} versions "
                          "(opforge promote ID, or opforge promote --auto)")
    as_projects = set(exported("project"))
    projects = project_exports([pk for pk in promoted if pk.version.backend in as_projects], name)
    ops, left_out = group_ops([pk for pk in promoted if pk.version.backend not in as_projects])
    left_out += projects.notes
    if not ops and not projects.files:
        raise ExportError("nothing to export: " + "; ".join(left_out))
    files = render_files(ops, name, projects.files)
    out = Path(out)
    write_tree(out, files)
    built, wheel_notes = _build_wheel(out, name, ops, archs) if wheel else (None, [])
    notes = left_out + [note for op in ops for note in op.notes] + wheel_notes + _written(projects)
    return ExportResult(out=out.resolve(), name=name, ops=[_summary(op) for op in ops], wheel=built,
                        files=sorted(files), notes=notes, ascendc=sorted({_top(path) for path in projects.files}))

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

from opforge.backends.ascendc import export as ascendc
from opforge.backends.cuda import export as cuda
from opforge.exporter.collect import ExportError, OpExport, group_ops
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
    ascendc: list[str] = field(default_factory=list)  # AscendC project directories written, "ascendc/<op>"

    def as_dict(self) -> dict:
        return asdict(self) | {"out": str(self.out), "wheel": str(self.wheel) if self.wheel else None}


# Import names an installed library must not take over (pip would replace the real package).
TAKEN = {"torch", "triton", "numpy", "vllm", "sglang", "aten", "prims", "opforge", "os", "sys", "typing"}


def check_name(name: str) -> None:
    if not re.fullmatch(r"[a-z_][a-z0-9_]*", name) or keyword.iskeyword(name):
        raise ExportError(f"--name {name!r}: the import name must be lower_snake_case (e.g. kernels_generated)")
    if name in TAKEN:
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
    return _build_wheel(out, name, (), ([], ""))[0]


def _build_wheel(out: Path, name: str, ops, archs: tuple[list[int], str]) -> tuple[Path, list[str]]:
    """build_wheel, the CUDA kernels of `ops` compiled into the copy first where nvcc is; (the
    wheel, notes on what was not prebuilt)."""
    dist = out / "dist"
    with tempfile.TemporaryDirectory() as tmp:
        src, built = Path(tmp) / "src", Path(tmp) / "dist"
        shutil.copytree(out, src, ignore=shutil.ignore_patterns("dist", "build", "*.egg-info", "__pycache__", MARKER))
        notes = cuda.prebuild(src, name, list(ops), *archs) if _has_cuda(ops) else []
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


def _has_cuda(ops) -> bool:
    return any(i.backend == "cuda" for op in ops for i in op.impls)


EXPORTED_BACKENDS = ("triton", "cuda", "triton_ascend", "ascendc")  # ascendc: as project directories


def _shipping_problem(pk: PromotedKernel) -> str | None:
    if pk.problem:
        return pk.problem
    if pk.version.backend not in EXPORTED_BACKENDS:
        return f"the {pk.version.backend} backend is not exported by this release"
    return cuda.format_problem(pk.source) if pk.version.backend == "cuda" else None


def ascendc_projects(promoted: list[PromotedKernel], package: str) -> tuple[dict[str, str], list[str]]:
    """(files of ascendc/<op>/ for each op's promoted AscendC version, notes on those left out)."""
    files: dict[str, str] = {}
    notes: list[str] = []
    done: set[str] = set()
    for pk in promoted:
        op = pk.version.op
        where = f"{op}: left out AscendC v{pk.version.number} on {pk.version.hardware}"
        if pk.problem:
            notes.append(f"{where}: {pk.problem}")
        elif op in done:
            notes.append(f"{where}: an earlier AscendC version of {op} is exported as ascendc/{op}/")
        else:
            try:
                files |= ascendc.project_files(pk, package)
                done.add(op)
            except ExportError as exc:
                notes.append(f"{where}: {exc}")
    return files, notes


def export_library(registry, out: Path, name: str = "kernels_generated", wheel: bool = False,
                   cuda_archs: str | None = None) -> ExportResult:
    """Render the active Triton, CUDA and Triton-Ascend versions of `registry` into `out` as the
    package `name`, and each op's AscendC version as a project directory beside it (out/ascendc/<op>/,
    not part of the wheel); with `wheel`, build it, CUDA kernels prebuilt where nvcc is
    (`cuda_archs`: "90,100", else $OPFORGE_CUDA_ARCHS, else this machine's GPUs)."""
    check_name(name)
    archs = cuda.wheel_archs(cuda_archs) if wheel else ([], "")
    promoted = [replace(pk, problem=_shipping_problem(pk)) for pk in registry.promoted_kernels()]
    if not promoted:
        raise ExportError("nothing to export: no promoted Triton, CUDA, Triton-Ascend or AscendC versions "
                          "(opforge promote ID, or opforge promote --auto)")
    projects, project_notes = ascendc_projects([pk for pk in promoted if pk.version.backend == "ascendc"], name)
    ops, left_out = group_ops([pk for pk in promoted if pk.version.backend != "ascendc"])
    left_out += project_notes
    if not ops and not projects:
        raise ExportError("nothing to export: " + "; ".join(left_out))
    files = render_files(ops, name, projects)
    out = Path(out)
    write_tree(out, files)
    built, wheel_notes = _build_wheel(out, name, ops, archs) if wheel else (None, [])
    dirs = sorted({"/".join(path.split("/")[:2]) for path in projects})
    written = [f"AscendC projects written (source only, build them with CANN: see each README.md): "
               f"{', '.join(d + '/' for d in dirs)}"] if dirs else []
    notes = left_out + [note for op in ops for note in op.notes] + wheel_notes + written
    return ExportResult(out=out.resolve(), name=name, ops=[_summary(op) for op in ops], wheel=built,
                        files=sorted(files), notes=notes, ascendc=dirs)

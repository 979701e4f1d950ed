"""What a batch will do: the spec files it names (SPEC..., a directory of KernelBench-format files,
or a list file) and, per op, whether to run it, resume the run an interrupted batch left, or skip it
because a kernel for the same spec source, backend and hardware is already verified."""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from opforge.agents.runlock import RunLock
from opforge.harness.errors import OpforgeError
from opforge.knowledge.corpus import opforge_fields

Action = Literal["run", "resume", "skip"]


@dataclass(frozen=True)
class OpTask:
    op: str
    spec_path: str  # absolute
    sha256: str  # of the spec source, as the registry keys specs
    action: Action
    run_key: str | None = None  # the run to resume
    candidate_id: int | None = None  # the verified kernel a skip rests on
    note: str | None = None  # why it is skipped, when not for a verified kernel


def resolve_specs(items: list[str], list_file: str | None = None) -> list[Path]:
    """Spec files from SPEC paths, directories (their *.py files, sorted, `_*` left out) and a
    list file (one path a line, `#` comments; relative paths are taken from the file's folder).
    Each file once, in the order given."""
    paths: list[Path] = []
    for item in items:
        paths += _expand(Path(item), item)
    if list_file:
        paths += _read_list(Path(list_file))
    if not paths:
        raise OpforgeError("no op specs given: name spec files, a directory of them, or --list FILE")
    return list(dict.fromkeys(p.resolve() for p in paths))


def _expand(path: Path, shown: str) -> list[Path]:
    if path.is_dir():
        found = sorted(p for p in path.glob("*.py") if not p.name.startswith("_"))
        if not found:
            raise OpforgeError(f"{shown}: no .py spec files in this directory")
        return found
    if not path.is_file():
        raise OpforgeError(f"{shown}: no such spec file or directory")
    return [path]


def _read_list(list_file: Path) -> list[Path]:
    try:
        lines = list_file.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise OpforgeError(f"--list {list_file}: cannot read it ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise OpforgeError(f"--list {list_file}: not UTF-8 text (one spec path a line)") from None
    paths: list[Path] = []
    for line in lines:
        entry = line.split("#", 1)[0].strip()
        if entry:
            path = Path(entry).expanduser()
            paths += _expand(path if path.is_absolute() else list_file.parent / path, entry)
    return paths


def op_name(source: str, path: Path) -> str:
    """OPFORGE["name"], else the file's stem — read with `ast`, the spec is not executed here."""
    name = opforge_fields(source).get("name")
    return name.strip() if isinstance(name, str) and name.strip() else path.stem


def plan_batch(paths: list[Path], registry, backend: str, hardware: str, force: bool = False) -> list[OpTask]:
    """One task per spec file. Two files declaring the same op name are refused: their kernels
    would overwrite each other's versions."""
    tasks, seen = [], {}
    for path in paths:
        try:
            source = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise OpforgeError(f"{path}: cannot read the spec ({exc})") from None
        name = op_name(source, path)
        if name in seen:
            raise OpforgeError(f"{path} and {seen[name]} both define op '{name}'")
        seen[name] = path
        tasks.append(_task(name, path, hashlib.sha256(source.encode()).hexdigest(), registry, backend, hardware, force))
    return tasks


def _task(name: str, path: Path, sha: str, registry, backend: str, hardware: str, force: bool) -> OpTask:
    if not force:
        verified = registry.verified_candidate(sha, backend, hardware)
        if verified is not None:
            return OpTask(name, str(path), sha, "skip", candidate_id=verified)
    left = registry.open_run(sha, backend, hardware)
    if left is not None and RunLock(registry.path, left.run_key).held_elsewhere():
        return OpTask(name, str(path), sha, "skip", run_key=left.run_key,
                      note=f"its run {left.run_key} is in progress in another batch")
    if left is not None:  # an interrupted batch (or `opforge run`) left it mid-way: continue it
        return OpTask(name, str(path), sha, "resume", run_key=left.run_key)
    return OpTask(name, str(path), sha, "run")



"""The specs the workbench offers and keeps: the standard suite, and uploaded or edited specs saved
beside the registry (runs refer to them by path), checked by the spec loader as they change."""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

from opforge.harness.spec import OpSpec

ROOT = Path(__file__).resolve().parent.parent  # the opforge package
SUITE = ROOT / "ops"  # the op suite (a link to the checkout's ops/, a copy in the wheel)


def suite_specs() -> list[Path]:
    return sorted(p for p in SUITE.glob("*.py") if not p.name.startswith("_"))


def save_spec(text: str, filename: str, db_path: Path) -> Path:
    """Keep an uploaded or edited spec beside the registry, named by its content (runs refer to it)."""
    stem = re.sub(r"[^A-Za-z0-9_]+", "_", Path(filename).stem).strip("_") or "spec"
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]
    # specs/<digest>/<stem>.py: the op name comes from the file stem when the spec has no
    # OPFORGE["name"], and it must stay the user's (a hash in it would not export as a module name).
    path = Path(db_path).parent / "specs" / digest / f"{stem}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        path.write_text(text, encoding="utf-8")
    return path


def validate_spec(path: Path, device: str | None = None) -> OpSpec:
    """The spec loader's own checks for that device (raises SpecError with one clear line)."""
    from opforge.harness.verify import VerifyOptions, prepare

    spec, _hardware = prepare(path, VerifyOptions(device=device))
    return spec

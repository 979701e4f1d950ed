"""Where Huawei's Triton-Ascend toolchain lives and what it can do on this machine.

`triton-ascend` installs a package named `triton`, so it cannot share the environment of NVIDIA's
Triton: `make setup` installs the pinned pair (ascend-wheels.txt) with `--no-deps` into a prefix of
its own, `.venv/ascend` (override: OPFORGE_ASCEND_PREFIX), and only this backend's worker puts it
first on `sys.path`. The host side never imports it: versions are read from the dist-info folders.

What runs here: the front end (TTIR → triton-adapter-opt → `bishengir-compile`'s HFusion/HIVM
pipeline, which plans the 192 KB unified buffer) and the interpreter. What needs CANN
(`ASCEND_HOME_PATH`): `hivmc`, the device code generator `bishengir-compile` calls last, and the
NPU runtime (`torch_npu`)."""
from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

WHEELS = Path(__file__).with_name("ascend-wheels.txt")
PREFIX_ENV = "OPFORGE_ASCEND_PREFIX"
# The Ascend 910B-class chips the checks are written for (Atlas A2/A3 cards): each AI core has one
# cube unit and two vector units, and a vector kernel's programs map onto the vector cores.
DEFAULT_TARGET = "Ascend910B3"
AI_CORES = {"Ascend910B1": 24, "Ascend910B2": 24, "Ascend910B3": 20, "Ascend910B4": 20}
VECTOR_PER_AI_CORE = 2
UB_BYTES = 192 * 1024  # the unified buffer of one vector core on 910B/910C
MAX_PROGRAMS = 65535  # the most blocks one Ascend kernel launch may have
# What every grid-too-large reason ends with, wherever the grid was read (source, recorded launch, run).
GRID_LIMIT = (f"an Ascend launch takes at most {MAX_PROGRAMS} (launch one program per AI core and loop over "
              "blocks inside)")


def pins() -> dict[str, str]:
    """{distribution: version} from ascend-wheels.txt."""
    found = {}
    for line in WHEELS.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            name, version = line.split("==", 1)
            found[name.strip()] = version.strip()
    return found


def prefix() -> Path:
    """The prefix triton-ascend is installed in (it may not exist)."""
    configured = os.environ.get(PREFIX_ENV)
    return Path(configured).absolute() if configured else Path(sys.prefix).absolute() / "ascend"


def _normal(name: str) -> str:
    return name.lower().replace("-", "_").replace(".", "_")


def installed_versions(root: Path | None = None) -> dict[str, str]:
    """{distribution: version} of what the prefix holds, read from its *.dist-info names."""
    root = root or prefix()
    versions = {}
    if root.is_dir():
        for info in root.glob("*.dist-info"):
            name, _, version = info.name[: -len(".dist-info")].partition("-")
            versions[_normal(name)] = version
    return versions


@dataclass(frozen=True)
class Toolchain:
    root: Path
    triton_ascend: str  # versions
    ascendnpu_ir: str

    @property
    def bishengir(self) -> Path:
        return self.root / "ascendnpuir" / "bin" / "bishengir-compile"

    @property
    def adapter(self) -> Path:
        return self.root / "triton" / "backends" / "ascend" / "triton-adapter-opt"

    def bin_dirs(self) -> list[str]:
        return [str(self.bishengir.parent)]


def find(root: Path | None = None) -> tuple[Toolchain | None, str | None]:
    """(the toolchain, None) or (None, why it cannot be used: one line)."""
    root = root or prefix()
    if not root.is_dir():
        return None, (f"triton-ascend is not installed: no prefix at {root} (make setup installs it; "
                      f"or pip install --no-deps --target {root} -r {WHEELS})")
    versions = installed_versions(root)
    wanted = pins()
    for dist in ("triton-ascend", "ascendnpu-ir"):
        have = versions.get(_normal(dist))
        if have is None:
            return None, f"{dist} is missing from {root} (pinned: {dist}=={wanted[dist]})"
        if have != wanted[dist]:
            return None, f"{dist} {have} in {root} is not the pinned {wanted[dist]} (ascend-wheels.txt)"
    chain = Toolchain(root, versions[_normal("triton-ascend")], versions[_normal("ascendnpu-ir")])
    for tool in (chain.bishengir, chain.adapter):
        if not os.access(tool, os.X_OK):
            return None, f"{tool} is missing or not executable"
    return chain, None


@lru_cache(maxsize=1)
def cached() -> tuple[Toolchain | None, str | None]:
    return find()


# -- CANN ---------------------------------------------------------------------------------------------
CANN_REASON = ("hivmc, Ascend's device code generator, ships only in the CANN toolkit "
               "(set ASCEND_HOME_PATH to an installed toolkit)")


def cann_home() -> Path | None:
    """An installed CANN toolkit (ASCEND_HOME_PATH, as CANN's set_env.sh exports it)."""
    home = os.environ.get("ASCEND_HOME_PATH")
    return Path(home) if home and Path(home).is_dir() else None


def find_hivmc(home: Path | None = None, path: str | None = None) -> str | None:
    """hivmc on PATH or in the toolkit's bin folders (CANN 8.x: <home>/bin, <home>/compiler/bin)."""
    home = home if home is not None else cann_home()
    dirs = [] if home is None else [home / "bin", home / "compiler" / "bin", home / "tools" / "bishengir" / "bin"]
    search = os.pathsep.join([*(str(d) for d in dirs), path if path is not None else os.environ.get("PATH", "")])
    return shutil.which("hivmc", path=search)

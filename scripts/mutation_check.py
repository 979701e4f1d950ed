"""`make mutation`: prove each guarantee in tests/guarantees.py by breaking it.

For every row: copy the repository (tracked and untracked-not-ignored files, links kept as links)
to a temporary directory, apply the row's mutation (each replacement must match exactly once, or
the row is reported as `stale`), and run only the row's tests there. The mutation is `killed` when
a test fails on an assertion; `broken` when the tests could not run (a collection or import error:
the mutation broke the module instead of removing the mechanism); `SURVIVED` when they pass.
Exit 1 unless every mutation is killed.

The copy gets a `.venv` of its own: a venv whose only site entries are the copy's root and the
project venv's site-packages (borrowed through a .pth line, so the editable finder that points at
this checkout is never installed). Every process a test starts, the sandboxed worker included
(`python -I -m opforge.harness.worker`, which ignores PYTHONPATH), then imports the mutated copy.
The Triton-Ascend prefix is the project's (OPFORGE_ASCEND_PREFIX), read-only to every job.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
import venv
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from guarantees import GUARANTEES, Guarantee, apply_mutation  # noqa: E402

BROKEN_TYPES = ("SyntaxError", "IndentationError", "ImportError", "ModuleNotFoundError", "NameError")
BIN_OPFORGE = "#!{python}\nimport sys\nfrom opforge.cli import main\nif __name__ == '__main__':\n    sys.exit(main())\n"


@dataclass
class Outcome:
    row: Guarantee
    result: str  # killed | SURVIVED | broken | stale | timeout
    seconds: float
    detail: str = ""


def repo_files(root: Path) -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                         capture_output=True, check=True).stdout
    return [f for f in out.decode().split("\0") if f]


def copy_tree(root: Path, dest: Path) -> None:
    """The working tree as git sees it; a symlink (opforge/ops -> ../ops) stays a symlink."""
    for rel in repo_files(root):
        src, dst = root / rel, dest / rel
        if not src.is_symlink() and not src.exists():
            continue  # deleted in the working tree
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            os.symlink(os.readlink(src), dst)
        else:
            shutil.copy2(src, dst)


def overlay_venv(copy: Path) -> Path:
    """copy/.venv: the project's libraries, the copy's opforge, no editable finder."""
    env_dir = copy / ".venv"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(env_dir)
    site = Path(sysconfig.get_path("purelib", vars={"base": str(env_dir), "platbase": str(env_dir)}))
    libs = Path(sysconfig.get_path("purelib"))  # the project venv's site-packages (this interpreter's)
    (site / "opforge_mutation.pth").write_text(f"{copy}\n{libs}\n")
    python = env_dir / "bin" / "python"
    script = env_dir / "bin" / "opforge"
    script.write_text(BIN_OPFORGE.format(python=python))
    script.chmod(0o755)
    return python


def check_imports(python: Path, copy: Path) -> str | None:
    """None when the copy's opforge is what a test and an isolated (-I) worker import."""
    code = "import opforge; print(opforge.__file__)"
    for flags in ([], ["-I"]):
        out = subprocess.run([str(python), *flags, "-c", code], capture_output=True, text=True, cwd="/")
        if not out.stdout.strip().startswith(str(copy)):
            return f"python {' '.join(flags)} imports opforge from {out.stdout.strip() or out.stderr.strip()}"
    return None


def make_copy(base: Path, name: str) -> tuple[Path, Path]:
    copy = base / name
    copy.mkdir()
    copy_tree(ROOT, copy)
    python = overlay_venv(copy)
    if problem := check_imports(python, copy):
        raise SystemExit(f"mutation_check: {problem}")
    return copy, python


def classify(rc: int, junit: Path, output: str) -> tuple[str, str]:
    if rc == 0:
        return "SURVIVED", "the mapped tests passed"
    if rc != 1 or "ERROR collecting" in output:
        return "broken", f"pytest exit {rc}: " + _last_line(output)
    try:
        cases = ET.parse(junit).getroot().iter("testcase")
    except (ET.ParseError, OSError):
        return "broken", "no junit report: " + _last_line(output)
    for case in cases:
        for bad in list(case.iter("error")) + list(case.iter("failure")):
            message = (bad.get("message") or "")[:160].replace("\n", " ")
            kind = bad.get("type") or message.split(":", 1)[0]
            if bad.tag == "error" or any(t in kind or message.startswith(t) for t in BROKEN_TYPES):
                return "broken", f"{case.get('name')}: {message}"
            return "killed", f"{case.get('name')}: {message}"
    return "broken", "pytest failed with no failing test: " + _last_line(output)


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


def run_row(row: Guarantee, base: Path, timeout: float, mutate: bool = True) -> Outcome:
    started = time.perf_counter()
    copy, python = make_copy(base, row.id)
    try:
        if mutate:
            apply_mutation(row, copy)
    except ValueError as exc:
        return Outcome(row, "stale", time.perf_counter() - started, str(exc))
    junit = base / f"{row.id}.xml"
    cmd = [str(python), "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", f"--junitxml={junit}", *row.tests]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PATH"] = f"{python.parent}:{env.get('PATH', '')}"
    # Huawei's triton-ascend lives in the venv (.venv/ascend), which git ignores, so the copy's venv
    # has none: without this, every Triton-Ascend test skips in the copy and a mutation of that backend survives.
    env.setdefault("OPFORGE_ASCEND_PREFIX", str(Path(sys.prefix).absolute() / "ascend"))
    try:
        done = subprocess.run(cmd, cwd=copy, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return Outcome(row, "timeout", time.perf_counter() - started, f"tests ran past {timeout:g} s")
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    result, detail = classify(done.returncode, junit, done.stdout + done.stderr)
    outcome = Outcome(row, result, time.perf_counter() - started, detail)
    shown = result if mutate else ("passes unmutated" if result == "SURVIVED" else "FAILS unmutated")
    print(f"{row.id}: {shown} ({outcome.seconds:.0f} s)", file=sys.stderr, flush=True)
    return outcome


def print_table(outcomes: list[Outcome]) -> None:
    rows = [("id", "promise", "tests", "result", "s")]
    rows += [(o.row.id, o.row.promise, ", ".join(t.split("::", 1)[-1] for t in o.row.tests), o.result,
              f"{o.seconds:.0f}") for o in outcomes]
    widths = [min(max(len(r[i]) for r in rows), cap) for i, cap in enumerate((24, 56, 60, 8, 5))]
    for r in rows:
        print("  ".join(cell[:w].ljust(w) for cell, w in zip(r, widths)).rstrip())
    print("\nwhy (the first failure, or what went wrong):")
    for o in outcomes:
        print(f"  {o.result}: {o.row.id}: {o.detail}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2, help="mutations run at once, each in its own copy (default 2)")
    parser.add_argument("--only", help="comma-separated row ids")
    parser.add_argument("--list", action="store_true", help="print the map and exit")
    parser.add_argument("--baseline", action="store_true", help="also run each row's tests unmutated (must pass)")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per row (default 900)")
    args = parser.parse_args(argv)
    rows = list(GUARANTEES)
    if args.only:
        wanted = set(args.only.split(","))
        if unknown := wanted - {r.id for r in rows}:
            parser.error(f"unknown row ids: {', '.join(sorted(unknown))}")
        rows = [r for r in rows if r.id in wanted]
    if args.list:
        for r in rows:
            print(f"{r.id}: {r.promise}\n    tests: {' '.join(r.tests)}\n    mutation: "
                  + "; ".join(f"{e.path}: {e.old.strip()[:60]!r} -> {e.new.strip()[:60]!r}" for e in r.mutation))
        return 0
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="opforge-mutation-") as tmp:
        base = Path(tmp)
        base.chmod(0o755)  # the sandboxes run the worker as another uid: the copy must be readable
        with ThreadPoolExecutor(args.jobs) as pool:
            if args.baseline:
                clean = list(pool.map(lambda r: run_row(r, base / "clean", args.timeout, mutate=False),
                                      _mkdir(base / "clean", rows)))
                failing = [o for o in clean if o.result != "SURVIVED"]
                for o in failing:
                    print(f"baseline: {o.row.id}: its tests fail unmutated: {o.detail}")
                if failing:
                    return 1
            outcomes = list(pool.map(lambda r: run_row(r, base, args.timeout), rows))
    print_table(outcomes)
    killed = sum(o.result == "killed" for o in outcomes)
    print(f"{killed} of {len(outcomes)} mutations killed in {time.perf_counter() - started:.0f} s "
          f"(--jobs {args.jobs})")
    return 0 if killed == len(outcomes) else 1


def _mkdir(path: Path, rows: list) -> list:
    path.mkdir()
    path.chmod(0o755)
    return rows


if __name__ == "__main__":
    sys.exit(main())

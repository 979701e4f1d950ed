"""The README's file tree stays true: every tracked file is listed, and every listed file exists."""
from __future__ import annotations

import subprocess

from conftest import ROOT


def tracked_files() -> set[str]:
    """The files in git's index: a new file counts once it is added; a developer's untracked
    scratch file does not."""
    out = subprocess.run(["git", "ls-files", "--cached"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return {line for line in out.splitlines() if line and (ROOT / line).exists()}


def tree_entries() -> set[str]:
    text = (ROOT / "README.md").read_text()
    block = text.split("## Files", 1)[1].split("```")[1]
    return {line.split()[0] for line in block.splitlines() if line.strip()}


# Generated trees are one entry each (their own README lists their files).
GENERATED = ("kernels_generated/",)


def test_every_tracked_file_is_in_the_readme_tree():
    missing = sorted(f for f in tracked_files() - tree_entries() if not f.startswith(GENERATED))
    assert not missing, f"add to the README's file tree: {missing}"


def test_every_file_in_the_tree_exists():
    stale = sorted(p for p in tree_entries() if not (ROOT / p).exists())
    assert not stale, f"listed in the README but absent: {stale}"

"""The README is a front door and the docs stay true: the README is short and links every docs page
once, every relative link resolves, and docs/layout.md's file tree lists every tracked file and only
files that exist."""
from __future__ import annotations

import re
import subprocess

from conftest import ROOT

README = ROOT / "README.md"
DOCS = ROOT / "docs"
LAYOUT = DOCS / "layout.md"
MAX_README_LINES = 300


def tracked_files() -> set[str]:
    """The files in git's index: a new file counts once it is added; a developer's untracked
    scratch file does not."""
    out = subprocess.run(["git", "ls-files", "--cached"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return {line for line in out.splitlines() if line and (ROOT / line).exists()}


def tree_entries() -> set[str]:
    text = LAYOUT.read_text()
    block = text.split("## Files", 1)[1].split("```")[1]
    return {line.split()[0] for line in block.splitlines() if line.strip()}


# Generated trees are one entry each (their own README lists their files).
GENERATED = ("kernels_generated/",)


def test_every_tracked_file_is_in_the_layout_tree():
    missing = sorted(f for f in tracked_files() - tree_entries() if not f.startswith(GENERATED))
    assert not missing, f"add to docs/layout.md's file tree: {missing}"


def test_every_file_in_the_tree_exists():
    stale = sorted(p for p in tree_entries() if not (ROOT / p).exists())
    assert not stale, f"listed in docs/layout.md but absent: {stale}"


def test_readme_is_short():
    lines = len(README.read_text().splitlines())
    assert lines < MAX_README_LINES, f"README.md has {lines} lines (under {MAX_README_LINES}): move detail to docs/"


# [text](target) outside code: inline links and images; a target with a scheme is not relative.
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
CODE = re.compile(r"`[^`\n]*`")


def links(path) -> list[str]:
    text = CODE.sub("", FENCE.sub("", path.read_text()))
    return [t for t in LINK.findall(text) if not re.match(r"[a-z][a-z0-9+.-]*:", t)]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = heading.replace("`", "").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path) -> set[str]:
    text = FENCE.sub("", path.read_text())
    return {slug(m) for m in re.findall(r"^#{1,6} (.+)$", text, re.M)}


def test_every_docs_page_is_linked_once_from_the_readme():
    targets = [t.split("#")[0] for t in links(README)]
    pages = sorted(p.relative_to(ROOT).as_posix() for p in DOCS.glob("*.md"))
    counts = {page: targets.count(page) for page in pages}
    wrong = {page: n for page, n in counts.items() if n != 1}
    assert not wrong, f"each docs page is linked exactly once from README.md (page: times linked): {wrong}"


def test_every_relative_link_resolves():
    broken = []
    for page in [README, *sorted(DOCS.glob("*.md"))]:
        for target in links(page):
            file, _, anchor = target.partition("#")
            dest = (page.parent / file).resolve() if file else page
            if not dest.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert not broken, "broken links:\n" + "\n".join(broken)

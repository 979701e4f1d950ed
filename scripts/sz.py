"""Line budget per package (tinygrad's sz.py idea): printed by CI so growth stays visible.

The table counts non-blank lines per package; the bar is the house limit, no module under opforge/
over 400 lines (every line, as an editor shows them; the backends' example kernels included).
tests/test_layers.py asserts the same bar through over_limit()."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("opforge/harness", "opforge/sandbox", "opforge/registry", "opforge/agents", "opforge/codegen",
            "opforge/backends", "opforge/knowledge", "opforge/exporter", "opforge/engines", "opforge/reward", "opforge/ui", "ops",
            "benchmarks", "scripts", "tests")
LIMIT = 400


def lines(path: Path) -> int:
    return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


def over_limit(root: Path = ROOT) -> list[str]:
    """`path (lines)` of every module under opforge/ longer than LIMIT lines."""
    paths = sorted((root / "opforge").rglob("*.py"))
    sizes = {path: len(path.read_text(encoding="utf-8").splitlines()) for path in paths}
    return [f"{path.relative_to(root)} ({n})" for path, n in sizes.items() if n > LIMIT]


def main() -> int:
    total = 0
    files = [ROOT / "opforge" / "cli.py", ROOT / "opforge" / "app.py"]
    for package in PACKAGES:
        files += sorted((ROOT / package).rglob("*.py")) if (ROOT / package).is_dir() else []
    by_package: dict[str, int] = {}
    for path in files:
        if not path.is_file():
            continue
        n = lines(path)
        rel = path.relative_to(ROOT)
        depth = 2 if rel.parts[0] == "opforge" else 1  # opforge/harness/... counts as harness
        name = rel.parts[depth - 1] if len(rel.parts) > depth else rel.name
        by_package[name] = by_package.get(name, 0) + n
        total += n
    for name, n in sorted(by_package.items(), key=lambda kv: -kv[1]):
        print(f"{name:<12} {n:>6}")
    print(f"{'total':<12} {total:>6}  (non-blank lines)")
    over = over_limit()
    print(f"modules over {LIMIT} lines: {', '.join(over)}" if over else f"no module under opforge/ over {LIMIT} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Line budget per package (tinygrad's sz.py idea): printed by CI so growth stays visible.
Flags modules over 400 lines, the house limit."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("opforge/harness", "opforge/sandbox", "opforge/registry", "opforge/agents", "opforge/codegen",
            "opforge/knowledge", "opforge/exporter", "opforge/ui", "ops", "benchmarks", "scripts", "tests")
LIMIT = 400


def lines(path: Path) -> int:
    return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


def main() -> int:
    total, over = 0, []
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
        if n > LIMIT and rel.parts[0] != "tests":
            over.append(f"{rel} ({n})")
    for name, n in sorted(by_package.items(), key=lambda kv: -kv[1]):
        print(f"{name:<12} {n:>6}")
    print(f"{'total':<12} {total:>6}  (non-blank lines)")
    if over:
        print(f"modules over {LIMIT} lines: {', '.join(over)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

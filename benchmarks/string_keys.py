"""Count the string-key subscripts (``x["key"]``) and ``.to_pylist()`` reads in the package: the results that still
travel as dicts. Issue 37's figures: ``python benchmarks/string_keys.py [ROOT]`` (ROOT: a checkout, default here).

Prints the total, the subscripts by the name subscripted in the runner and the card (``unit``, ``summary``, ...),
and the ``to_pylist()`` reads."""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_name(node.value)}.{node.attr}"
    if isinstance(node, ast.Subscript):
        return f"{_name(node.value)}[]"
    return type(node).__name__


def scan(root: Path) -> tuple[Counter, Counter, int]:
    """(file -> string-key subscripts, (file, subscripted name) -> count, to_pylist() reads)."""
    by_file: Counter = Counter()
    by_name: Counter = Counter()
    pylist = 0
    for path in sorted((root / "spare_gen").rglob("*.py")):
        rel = str(path.relative_to(root))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                    and isinstance(node.slice.value, str):
                by_file[rel] += 1
                by_name[(rel, _name(node.value))] += 1
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "to_pylist":
                pylist += 1
    return by_file, by_name, pylist


def main(argv: list[str]) -> None:
    root = Path(argv[0]) if argv else Path(__file__).resolve().parents[1]
    by_file, by_name, pylist = scan(root)
    print(f"string-key subscripts: {sum(by_file.values())} in {len(by_file)} files; to_pylist() reads: {pylist}")
    for rel, name in (("spare_gen/runner/stage.py", "unit"), ("spare_gen/runner/sharded.py", "unit"),
                      ("spare_gen/runner/stage.py", "loaded"), ("spare_gen/runner/sharded.py", "res"),
                      ("spare_gen/runner/sharded.py", "reuse[]"), ("spare_gen/card/dataset.py", "summary"),
                      ("spare_gen/stages/questions/driver.py", "summary")):
        print(f"  {rel} {name}[...]: {by_name[(rel, name)]}")
    runner = {k: v for k, v in by_name.items() if k[0].startswith("spare_gen/runner/")}
    print("  runner, every subscripted name: "
          + ", ".join(f"{Path(r).name}:{n} {c}" for (r, n), c in sorted(runner.items())))


if __name__ == "__main__":
    main(sys.argv[1:])

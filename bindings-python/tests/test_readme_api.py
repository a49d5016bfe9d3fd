"""The README's API table names every public member of ``Generator`` the stubs declare, and every
keyword its constructor takes (read from ``__init__.pyi``: no build needed)."""

from __future__ import annotations

import ast
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
STUBS = HERE / "python" / "snowmint" / "__init__.pyi"
README = HERE / "README.md"


def _api_section() -> str:
    text = README.read_text(encoding="utf-8")
    return text.split("\n## API\n", 1)[1].split("\n## ", 1)[0]


def _generator() -> ast.ClassDef:
    tree = ast.parse(STUBS.read_text(encoding="utf-8"))
    return next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Generator")


def test_every_generator_member_is_in_the_api_table() -> None:
    api = _api_section()
    members = [
        n.name
        for n in _generator().body
        if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")
    ]
    assert {"state_file", "close", "attach", "detach"} <= set(members)
    missing = [m for m in members if f"gen.{m}" not in api]
    assert not missing, f"the README's API table lacks {missing}"


def test_every_constructor_keyword_is_in_the_api_table() -> None:
    new = next(
        n for n in _generator().body if isinstance(n, ast.FunctionDef) and n.name == "__new__"
    )
    api = _api_section()
    missing = [a.arg for a in new.args.kwonlyargs if f"{a.arg}=" not in api]
    assert not missing, f"the README's Generator(...) row lacks {missing}"


if __name__ == "__main__":
    test_every_generator_member_is_in_the_api_table()
    test_every_constructor_keyword_is_in_the_api_table()
    print("ok")

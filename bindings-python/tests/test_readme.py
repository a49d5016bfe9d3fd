"""Every ```python block of README.md runs (in order, each in a fresh namespace)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterator

import pytest
from test_client import Service

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_readme_has_snippets() -> None:
    assert len(BLOCKS) >= 3


@pytest.fixture(scope="module", autouse=True)
def service_url() -> Iterator[None]:
    """The Client section's blocks read SNOWMINT_SERVICE_URL: a live service for them."""
    s = Service()
    os.environ["SNOWMINT_SERVICE_URL"] = s.url
    try:
        yield
    finally:
        del os.environ["SNOWMINT_SERVICE_URL"]
        s.kill()


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_snippet_runs(code: str) -> None:
    exec(compile(code, str(README), "exec"), {"__name__": "readme"})

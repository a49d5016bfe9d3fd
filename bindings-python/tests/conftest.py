"""Shared pytest set-up: a skipped test is a failure in this suite (every vector case must run)."""

from __future__ import annotations

import pytest

_skipped: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped:
        _skipped.append(report.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _skipped and session.exitstatus == 0:
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # type: ignore[no-untyped-def]
    if _skipped:
        terminalreporter.write_line(
            f"FAILED: {len(_skipped)} test(s) were skipped; this suite runs everything: {_skipped[:5]}",
            red=True,
        )

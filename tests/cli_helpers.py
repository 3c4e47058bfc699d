"""Helpers the command-line tests share: run the CLI in-process and check a refusal."""

from __future__ import annotations

from click.testing import CliRunner

from battlecalc.cli import cli


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


def assert_usage_error(result, fragment: str | None = None) -> str:
    """Exit status 2, one ``Error: ...`` line on stderr, nothing on stdout, no traceback."""
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ")
    assert "Traceback" not in result.output
    if fragment is not None:
        assert fragment in lines[0], lines[0]
    return lines[0]

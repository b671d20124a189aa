"""Project-level promises: the README's commands, CI calling the same test command."""

from __future__ import annotations

import re

from tests.conftest import ROOT


def _readme_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.+?)\n```", quick, re.S)


def test_quick_start_has_exactly_two_commands() -> None:
    commands = _readme_commands()
    assert len(commands) == 2
    assert all("\n" not in c for c in commands)
    assert "interview-bot run" in commands[0] and "BOT_TOKEN=" in commands[0]
    assert "pytest" in commands[1]


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert _readme_commands()[1] in ci.splitlines()


def test_env_example_lists_every_documented_variable() -> None:
    example = (ROOT / ".env.example").read_text(encoding="utf-8")
    for name in ("BOT_TOKEN", "DATABASE_URL", "TELEGRAM_API_URL", "BANK_PATH", "ADMIN_IDS",
                 "DEFAULT_TIMEZONE", "DEFAULT_LANGUAGE", "LOG_LEVEL", "LOG_FORMAT"):  # fmt: skip
        assert name in example


def test_every_package_is_listed_for_installation() -> None:
    """A subpackage missing from pyproject's list works in a checkout but not when installed."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "bot").rglob("__init__.py")}
    assert found <= listed, f"add to pyproject [tool.setuptools] packages: {sorted(found - listed)}"

"""Project-level promises: the README's commands, CI calling the same test command."""

from __future__ import annotations

import re

from tests.conftest import ROOT


def _readme_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.+?)\n```", quick, re.S)


def test_quick_start_starts_the_demo_first() -> None:
    """First the demo (nothing else needed on a fresh machine), then a real token (its rule stated),
    then the tests."""
    commands = _readme_commands()
    assert len(commands) == 3
    assert all("\n" not in c for c in commands)
    assert commands[0] == "python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/interview-bot demo"
    assert "interview-bot run" in commands[1] and "BOT_TOKEN=" in commands[1]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "a secret of 20 or more" in readme.split("## Quick start", 1)[1].split("```bash", 3)[1]
    assert "pytest" in commands[2]


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert _readme_commands()[2] in ci.splitlines()


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


def test_compose_file_describes_two_webhook_instances_behind_a_proxy() -> None:
    """No compose validator runs on these machines; check the structure we rely on."""
    import yaml

    compose = yaml.safe_load((ROOT / "compose.yaml").read_text(encoding="utf-8"))
    services = compose["services"]
    assert {"postgres", "bot1", "bot2", "proxy"} <= set(services)
    for name in ("bot1", "bot2"):
        bot = services[name]
        assert bot["command"] == ["run", "--webhook"]
        assert bot["environment"]["DATABASE_URL"].startswith("postgresql://")
        assert bot["depends_on"]["postgres"]["condition"] == "service_healthy"
    nginx = (ROOT / "deploy" / "nginx.conf").read_text(encoding="utf-8")
    assert "server bot1:8443" in nginx and "server bot2:8443" in nginx
    assert "/tg-hook" in nginx and "/tg-hook" in services["bot1"]["environment"]["WEBHOOK_URL"]


def test_dockerfile_is_multi_stage_non_root_with_healthcheck() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert dockerfile.count("FROM ") == 2
    assert "USER bot" in dockerfile
    assert "HEALTHCHECK" in dockerfile and '"interview-bot", "health"' in dockerfile
    assert 'VOLUME ["/data"]' in dockerfile

"""The tests' fake Telegram: the stand-in Bot API server that ships in the package (``bot/demo/standin.py``,
which ``interview-bot demo`` runs too), re-exported under the name the tests use."""

from bot.demo.standin import *  # noqa: F403 — every name the stand-in exports
from bot.demo.standin import __all__ as __all__

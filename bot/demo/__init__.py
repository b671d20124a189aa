"""``interview-bot demo``: the real bot against a local stand-in for Telegram, with a web chat.

:mod:`bot.demo.standin` is the stand-in Bot API server (also the end-to-end tests' fake Telegram),
:mod:`bot.demo.server` the web chat, its JSON API and the command. Nothing on the bot's own run path
imports this package.
"""

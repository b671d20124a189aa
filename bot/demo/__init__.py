"""``interview-bot demo``: the real bot against a local stand-in for Telegram, with a web chat.

:mod:`bot.demo.standin` is the stand-in Bot API server (also the end-to-end tests' fake Telegram;
its server side in :mod:`bot.demo.bot_api` and :mod:`bot.demo.bot_methods`, Telegram's HTML in
:mod:`bot.demo.markup`), :mod:`bot.demo.webchat` the web chat and its JSON API, :mod:`bot.demo.server`
the command. Nothing on the bot's own run path imports this package.
"""

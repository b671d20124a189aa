"""interview-bot: a Telegram bot that trains ML/LLM engineers for technical interviews."""

__version__ = "0.1.0"

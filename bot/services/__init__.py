"""Use cases shared by the Telegram adapter, pushes and the terminal; never imports ``telegram``."""

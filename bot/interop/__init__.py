"""Carrying the bank in and out: Markdown vault / CSV import, Anki / CSV export."""

"""Errors that end a command with exit code 2 and one clear line (click's convention for bad input)."""

from __future__ import annotations


class InputError(ValueError):
    """Bad input from the user: an option's value, an unreadable or malformed file, a report of another schema."""

"""Helpers for turning titles into URL parts."""

import re


def slugify(title):
    """Return a URL slug for `title`."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")

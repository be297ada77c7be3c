import re

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$", re.IGNORECASE)


def normalize(text):
    """Trimmed and lower-cased."""
    return text.strip().lower()


def is_valid_email(address):
    """True for something@domain.tld."""
    return bool(_EMAIL.match(address))

def normalize(text):
    """Trimmed and lower-cased."""
    return text.strip().lower()

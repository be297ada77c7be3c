UNITS = {"h": 3600, "m": 60, "s": 1}


def parse_duration(text):
    """Parse a duration like "1h30m", "45s" or "2h5s" into whole seconds.

    Each part is a non-negative integer followed by one of the units in UNITS, in
    any order, each unit at most once. Surrounding whitespace is ignored. Anything
    else (an empty string, "10", "5x", "1h1h") raises ValueError.
    """
    raise NotImplementedError

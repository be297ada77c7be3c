import re

UNITS = {"h": 3600, "m": 60, "s": 1}


def parse_duration(text):
    """Parse a duration like "1h30m" into whole seconds."""
    text = text.strip()
    if not text or not re.fullmatch(r"(\d+[hms])+", text):
        raise ValueError(f"not a duration: {text!r}")
    total, seen = 0, set()
    for number, unit in re.findall(r"(\d+)([hms])", text):
        if unit in seen:
            raise ValueError(f"{unit} twice in {text!r}")
        seen.add(unit)
        total += int(number) * UNITS[unit]
    return total

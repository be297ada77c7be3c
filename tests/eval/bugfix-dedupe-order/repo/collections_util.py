def dedupe(items):
    """`items` without repeats, each kept at its first position."""
    return list(set(items))


def counts(items):
    out = {}
    for item in items:
        out[item] = out.get(item, 0) + 1
    return out

def mean(values):
    return sum(values) / len(values)


def median(values):
    """The middle value of `values` (the mean of the two middle ones for an even count)."""
    if not values:
        raise ValueError("median of nothing")
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid]

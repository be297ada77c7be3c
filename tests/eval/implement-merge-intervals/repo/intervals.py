def merge(intervals):
    """Merge overlapping intervals.

    `intervals` is a list of (start, end) pairs with start <= end, in any order.
    Returns a new list of disjoint pairs sorted by start, where intervals that
    overlap or touch (one ends where the next starts) are merged into one.
    The input list is not modified.
    """
    raise NotImplementedError

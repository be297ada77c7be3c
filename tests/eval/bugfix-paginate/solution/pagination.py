import math


def page_count(items, size):
    return math.ceil(len(items) / size)


def page(items, number, size):
    """Items of page `number` (1-based) with `size` items per page; [] past the end."""
    if number < 1 or size < 1:
        raise ValueError("page number and size start at 1")
    start = (number - 1) * size
    return items[start:start + size]

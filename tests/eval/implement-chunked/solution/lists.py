"""Small list utilities."""


def first(items, default=None):
    """The first item, or `default` when there is none."""
    return items[0] if items else default


def chunked(items, size):
    """Split `items` into lists of `size` items."""
    if size < 1:
        raise ValueError("size must be at least 1")
    items = list(items)
    return [items[i:i + size] for i in range(0, len(items), size)]

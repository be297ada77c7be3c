"""Small list utilities."""


def first(items, default=None):
    """The first item, or `default` when there is none."""
    return items[0] if items else default


def chunked(items, size):
    """Split `items` into lists of `size` items, in order; the last may be shorter.

    chunked([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]
    Any iterable is accepted. Raises ValueError when size < 1.
    """
    raise NotImplementedError

"""Helpers for turning titles into URL parts."""


def slugify(title):
    """Return a URL slug for `title`.

    Letters are lower-cased; every run of characters that are not ASCII letters
    or digits becomes a single hyphen; there are no hyphens at either end.

    >>> slugify("Hello, World!")
    'hello-world'
    """
    raise NotImplementedError

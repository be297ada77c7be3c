def flatten(data, sep="."):
    """Flatten nested dicts into one dict whose keys are the paths joined by `sep`.

    flatten({"a": {"b": 1, "c": {"d": 2}}, "e": 3}) == {"a.b": 1, "a.c.d": 2, "e": 3}
    Values that are not dicts (lists included) are kept as they are. An empty nested
    dict disappears. Keys are converted with str().
    """
    raise NotImplementedError

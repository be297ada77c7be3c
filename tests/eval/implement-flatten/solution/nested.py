def flatten(data, sep="."):
    """Flatten nested dicts into one dict whose keys are the paths joined by `sep`."""
    out = {}
    for key, value in data.items():
        key = str(key)
        if isinstance(value, dict):
            for sub, v in flatten(value, sep).items():
                out[f"{key}{sep}{sub}"] = v
        else:
            out[key] = value
    return out

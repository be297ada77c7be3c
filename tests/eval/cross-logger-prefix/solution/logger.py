def make_logger(sink, prefix="[app]"):
    """A function that writes '<prefix> <message>' lines to `sink` (a list)."""

    def log(message):
        sink.append(f"{prefix} {message}")

    return log

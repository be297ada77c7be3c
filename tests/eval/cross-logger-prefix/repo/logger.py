def make_logger(sink):
    """A function that writes '[app] <message>' lines to `sink` (a list)."""

    def log(message):
        sink.append(f"[app] {message}")

    return log

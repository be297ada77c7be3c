from logger import make_logger


def setup(sink, prefix="[app]"):
    """Start the app: returns its logger after logging that it started."""
    log = make_logger(sink, prefix)
    log("started")
    return log

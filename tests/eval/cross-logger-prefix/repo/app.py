from logger import make_logger


def setup(sink):
    """Start the app: returns its logger after logging that it started."""
    log = make_logger(sink)
    log("started")
    return log

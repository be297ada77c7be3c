from config import MAX_RETRIES


def call_with_retries(fn):
    """Call `fn` until it succeeds, at most MAX_RETRIES times; re-raise the last error."""
    for attempt in range(MAX_RETRIES):
        try:
            return fn()
        except ConnectionError:
            if attempt == MAX_RETRIES - 1:
                raise

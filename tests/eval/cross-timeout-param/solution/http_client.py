from transport import Transport

_transport = Transport()


def fetch(url, transport=None, timeout=10):
    """GET `url`; returns the Response."""
    t = transport or _transport
    return t.send(url, timeout=timeout)


def fetch_all(urls, transport=None):
    return [fetch(u, transport=transport) for u in urls]

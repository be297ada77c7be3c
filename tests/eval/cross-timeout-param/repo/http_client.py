from transport import Transport

_transport = Transport()


def fetch(url, transport=None):
    """GET `url`; returns the Response."""
    t = transport or _transport
    return t.send(url)


def fetch_all(urls, transport=None):
    return [fetch(u, transport=transport) for u in urls]

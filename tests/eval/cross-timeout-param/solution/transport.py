class Response:
    def __init__(self, url, status, timeout=None):
        self.url = url
        self.status = status
        self.timeout = timeout


class Transport:
    """A fake transport: every URL answers 200, except ones containing 'missing'."""

    def __init__(self):
        self.sent = []

    def send(self, url, timeout=10):
        self.sent.append(url)
        return Response(url, 404 if "missing" in url else 200, timeout)

import unittest
from transport import Transport
from http_client import fetch, fetch_all


class Timeout(unittest.TestCase):
    def test_default_timeout(self):
        r = fetch("http://x/a", transport=Transport())
        self.assertEqual((r.status, r.timeout), (200, 10))

    def test_given_timeout_reaches_the_transport(self):
        t = Transport()
        r = fetch("http://x/missing", timeout=2.5, transport=t)
        self.assertEqual((r.status, r.timeout), (404, 2.5))
        self.assertEqual(t.sent, ["http://x/missing"])

    def test_fetch_all_still_works(self):
        rs = fetch_all(["a", "b"], transport=Transport())
        self.assertEqual([r.timeout for r in rs], [10, 10])

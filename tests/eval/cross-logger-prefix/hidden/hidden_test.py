import unittest
from logger import make_logger
from app import setup


class Prefix(unittest.TestCase):
    def test_default_prefix(self):
        sink = []
        make_logger(sink)("hi")
        self.assertEqual(sink, ["[app] hi"])

    def test_custom_prefix_in_the_logger(self):
        sink = []
        make_logger(sink, prefix="<db>")("up")
        self.assertEqual(sink, ["<db> up"])

    def test_setup_passes_it_on(self):
        sink = []
        log = setup(sink, prefix="[worker-2]")
        log("done")
        self.assertEqual(sink, ["[worker-2] started", "[worker-2] done"])
        sink2 = []
        setup(sink2)
        self.assertEqual(sink2, ["[app] started"])

import unittest
from collections_util import counts, dedupe


class Dedupe(unittest.TestCase):
    def test_order_is_kept(self):
        self.assertEqual(dedupe([3, 1, 3, 2, 1]), [3, 1, 2])

    def test_counts(self):
        self.assertEqual(counts("aab"), {"a": 2, "b": 1})

import unittest
from collections_util import dedupe


class Order(unittest.TestCase):
    def test_numbers(self):
        self.assertEqual(dedupe([30, 10, 30, 20, 10, 0, 20]), [30, 10, 20, 0])

    def test_strings_many(self):
        words = [f"w{i % 7}" for i in range(50, 0, -1)]
        self.assertEqual(dedupe(words), ["w1", "w0", "w6", "w5", "w4", "w3", "w2"])

    def test_empty_and_iterables(self):
        self.assertEqual(dedupe([]), [])
        self.assertEqual(dedupe(iter("zzyx")), ["z", "y", "x"])

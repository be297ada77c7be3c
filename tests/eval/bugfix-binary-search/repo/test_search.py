import unittest
from search import find


class Find(unittest.TestCase):
    def test_middle(self):
        self.assertEqual(find([1, 3, 5, 7, 9], 5), 2)

    def test_last(self):
        self.assertEqual(find([1, 3, 5, 7, 9], 9), 4)

    def test_missing(self):
        self.assertEqual(find([1, 3, 5], 4), -1)

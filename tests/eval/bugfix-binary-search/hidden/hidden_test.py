import unittest
from search import find


class Search(unittest.TestCase):
    def test_every_position(self):
        items = [2, 4, 8, 16, 32, 64]
        for i, x in enumerate(items):
            self.assertEqual(find(items, x), i)

    def test_single_and_empty(self):
        self.assertEqual(find([7], 7), 0)
        self.assertEqual(find([7], 8), -1)
        self.assertEqual(find([], 1), -1)

    def test_missing_at_the_ends(self):
        self.assertEqual(find([2, 4, 6], 1), -1)
        self.assertEqual(find([2, 4, 6], 7), -1)

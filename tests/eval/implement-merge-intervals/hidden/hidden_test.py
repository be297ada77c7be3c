import unittest
from intervals import merge


class Merge(unittest.TestCase):
    def test_unsorted_overlaps(self):
        self.assertEqual(merge([(8, 10), (1, 3), (2, 6), (15, 18)]),
                         [(1, 6), (8, 10), (15, 18)])

    def test_touching_and_nested(self):
        self.assertEqual(merge([(1, 4), (4, 5), (2, 3)]), [(1, 5)])

    def test_empty_and_single(self):
        self.assertEqual(merge([]), [])
        self.assertEqual(merge([(3, 3)]), [(3, 3)])

    def test_input_untouched(self):
        data = [(5, 6), (1, 2)]
        merge(data)
        self.assertEqual(data, [(5, 6), (1, 2)])

import unittest
from stats import median


class Median(unittest.TestCase):
    def test_even(self):
        self.assertEqual(median([10, 40, 20, 30, 60, 50]), 35)
        self.assertEqual(median([7, 8]), 7.5)

    def test_odd_and_single(self):
        self.assertEqual(median([5]), 5)
        self.assertEqual(median([9, 1, 5, 3, 7]), 5)

    def test_input_not_sorted_in_place(self):
        data = [3, 1, 2, 0]
        median(data)
        self.assertEqual(data, [3, 1, 2, 0])

    def test_empty(self):
        with self.assertRaises(ValueError):
            median([])

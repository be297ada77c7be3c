import unittest
from lists import chunked


class Chunked(unittest.TestCase):
    def test_uneven(self):
        self.assertEqual(chunked("abcdefg", 3), [["a", "b", "c"], ["d", "e", "f"], ["g"]])

    def test_even_and_empty(self):
        self.assertEqual(chunked(range(4), 2), [[0, 1], [2, 3]])
        self.assertEqual(chunked([], 5), [])

    def test_bigger_than_input(self):
        self.assertEqual(chunked((1, 2), 10), [[1, 2]])

    def test_bad_size(self):
        with self.assertRaises(ValueError):
            chunked([1], 0)

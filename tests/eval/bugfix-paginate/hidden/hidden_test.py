import unittest
from pagination import page


class Page(unittest.TestCase):
    def test_every_item_once(self):
        items = list("abcdefghijk")
        got = []
        for n in range(1, 5):
            got.extend(page(items, n, 3))
        self.assertEqual(got, items)

    def test_partial_last_page_of_one(self):
        self.assertEqual(page([1, 2, 3], 2, 2), [3])

    def test_past_the_end(self):
        self.assertEqual(page([1, 2, 3], 5, 2), [])

    def test_bad_arguments(self):
        with self.assertRaises(ValueError):
            page([1], 0, 2)

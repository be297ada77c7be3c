import unittest
from pagination import page, page_count


class Pages(unittest.TestCase):
    def test_first_page(self):
        self.assertEqual(page(list(range(10)), 1, 4), [0, 1, 2, 3])

    def test_last_page(self):
        self.assertEqual(page(list(range(10)), 3, 4), [8, 9])

    def test_count(self):
        self.assertEqual(page_count(list(range(10)), 4), 3)

import unittest
from cart import Cart


class CartTest(unittest.TestCase):
    def test_total(self):
        self.assertEqual(Cart().add("a", 2).add("b", 3).total(), 5)

    def test_carts_are_separate(self):
        first = Cart().add("apple", 1)
        second = Cart()
        self.assertEqual(second.items, [])
        self.assertEqual(first.total(), 1)

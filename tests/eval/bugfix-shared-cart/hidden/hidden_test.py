import unittest
from cart import Cart


class Separate(unittest.TestCase):
    def test_many_carts(self):
        carts = [Cart() for _ in range(3)]
        for i, c in enumerate(carts):
            c.add(f"item{i}", i + 1)
        self.assertEqual([c.total() for c in carts], [1, 2, 3])
        self.assertEqual(Cart().items, [])

    def test_given_items_are_kept(self):
        c = Cart([("x", 4)])
        c.add("y", 1)
        self.assertEqual(c.total(), 5)

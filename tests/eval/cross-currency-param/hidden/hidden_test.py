import unittest
from money import format_price
from receipt import render


class Currency(unittest.TestCase):
    def test_default_is_dollars(self):
        self.assertEqual(format_price(1234.5), "$1,234.50")

    def test_other_sign(self):
        self.assertEqual(format_price(3, currency="€"), "€3.00")

    def test_receipt_in_pounds(self):
        text = render([("tea", 2.0), ("cake", 3.25)], currency="£")
        self.assertIn("£5.25", text.splitlines()[-1])
        self.assertNotIn("$", text)
        self.assertEqual(len(text.splitlines()), 3)

    def test_receipt_default(self):
        self.assertIn("$2.00", render([("tea", 2.0)]))

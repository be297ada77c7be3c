import unittest
from roman import to_roman


class ToRoman(unittest.TestCase):
    def test_values(self):
        cases = {1: "I", 4: "IV", 9: "IX", 14: "XIV", 40: "XL", 90: "XC",
                 400: "CD", 944: "CMXLIV", 2024: "MMXXIV", 3999: "MMMCMXCIX"}
        for n, want in cases.items():
            self.assertEqual(to_roman(n), want, n)

    def test_out_of_range(self):
        for n in (0, -3, 4000):
            with self.assertRaises(ValueError):
                to_roman(n)

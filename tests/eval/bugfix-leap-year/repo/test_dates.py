import unittest
from dates import days_in_month, is_leap


class Dates(unittest.TestCase):
    def test_common_leap_years(self):
        self.assertTrue(is_leap(2024))
        self.assertFalse(is_leap(2023))

    def test_century(self):
        self.assertFalse(is_leap(1900))

    def test_february(self):
        self.assertEqual(days_in_month(2024, 2), 29)

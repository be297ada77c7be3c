import unittest
from dates import days_in_month, is_leap


class Leap(unittest.TestCase):
    def test_rules(self):
        self.assertTrue(is_leap(2000))
        self.assertTrue(is_leap(1600))
        self.assertFalse(is_leap(2100))
        self.assertFalse(is_leap(1800))
        self.assertTrue(is_leap(1996))
        self.assertFalse(is_leap(2019))

    def test_february(self):
        self.assertEqual(days_in_month(2100, 2), 28)
        self.assertEqual(days_in_month(2000, 2), 29)
        self.assertEqual(days_in_month(2100, 3), 31)

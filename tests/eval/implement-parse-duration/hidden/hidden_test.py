import unittest
from duration import parse_duration


class ParseDuration(unittest.TestCase):
    def test_combinations(self):
        self.assertEqual(parse_duration("2h15m"), 8100)
        self.assertEqual(parse_duration("90s"), 90)
        self.assertEqual(parse_duration(" 1m1s "), 61)
        self.assertEqual(parse_duration("3h7s"), 10807)
        self.assertEqual(parse_duration("0m"), 0)

    def test_rejects(self):
        for bad in ("", "  ", "12", "4d", "1h1h", "h", "1.5h", "-2m"):
            with self.assertRaises(ValueError, msg=bad):
                parse_duration(bad)

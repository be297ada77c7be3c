import unittest
from textstats import count_words


class Count(unittest.TestCase):
    def test_whitespace_kinds(self):
        self.assertEqual(count_words("\ta\t\tb\r\nc   d\n"), 4)

    def test_blank(self):
        self.assertEqual(count_words("   \n "), 0)
        self.assertEqual(count_words(""), 0)

    def test_punctuation_stays_in_words(self):
        self.assertEqual(count_words("well,  it's  done."), 3)

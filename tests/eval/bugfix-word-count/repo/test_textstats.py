import unittest
from textstats import count_words, longest_word


class TextStats(unittest.TestCase):
    def test_simple(self):
        self.assertEqual(count_words("one two three"), 3)

    def test_extra_spaces(self):
        self.assertEqual(count_words("one  two\nthree "), 3)

    def test_longest(self):
        self.assertEqual(longest_word("a abc ab"), "abc")

import unittest
from words import top_words


class TopWords(unittest.TestCase):
    def test_counts_and_ties(self):
        text = "The cat and the hat. A cat! THE end, and so on"
        self.assertEqual(top_words(text, 3), [("the", 3), ("and", 2), ("cat", 2)])

    def test_fewer_words_than_asked(self):
        self.assertEqual(top_words("b a b", 10), [("b", 2), ("a", 1)])

    def test_apostrophes(self):
        self.assertEqual(top_words("don't stop, don't", 1), [("don't", 2)])

    def test_empty(self):
        self.assertEqual(top_words("123 !!", 2), [])

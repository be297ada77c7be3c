import unittest
from text import slugify


class Slugify(unittest.TestCase):
    def test_words_and_punctuation(self):
        self.assertEqual(slugify("  Rust & Python: a Tale  "), "rust-python-a-tale")

    def test_digits_are_kept(self):
        self.assertEqual(slugify("Top 10 Tips (2024)"), "top-10-tips-2024")

    def test_nothing_left(self):
        self.assertEqual(slugify("!!!"), "")

    def test_already_a_slug(self):
        self.assertEqual(slugify("already-a-slug"), "already-a-slug")

    def test_non_ascii_is_a_separator(self):
        self.assertEqual(slugify("café au lait"), "caf-au-lait")

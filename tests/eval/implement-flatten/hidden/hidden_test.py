import unittest
from nested import flatten


class Flatten(unittest.TestCase):
    def test_deep(self):
        self.assertEqual(flatten({"x": {"y": {"z": [1, 2]}}, "w": None}),
                         {"x.y.z": [1, 2], "w": None})

    def test_separator_and_keys(self):
        self.assertEqual(flatten({1: {"b": True}}, sep="/"), {"1/b": True})

    def test_empty(self):
        self.assertEqual(flatten({"a": {}, "b": 0}), {"b": 0})
        self.assertEqual(flatten({}), {})

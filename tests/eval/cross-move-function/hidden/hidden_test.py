import unittest
import utils
import validators
import signup


class Moved(unittest.TestCase):
    def test_validators_has_it(self):
        self.assertTrue(validators.is_valid_email("ann@example.org"))
        self.assertFalse(validators.is_valid_email("ann@example"))
        self.assertFalse(validators.is_valid_email("a b@example.org"))

    def test_utils_keeps_the_rest_only(self):
        self.assertFalse(hasattr(utils, "is_valid_email"))
        self.assertEqual(utils.normalize("  Hi "), "hi")

    def test_signup_uses_the_new_module(self):
        # Imported from validators (by name or as a module), not a copy of its own.
        own = getattr(signup, "is_valid_email", None)
        self.assertIn(own, (None, validators.is_valid_email))
        self.assertEqual(signup.register(" Bob@Example.COM "), "bob@example.com")
        with self.assertRaises(ValueError):
            signup.register("nobody")

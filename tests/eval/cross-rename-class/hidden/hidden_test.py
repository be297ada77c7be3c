import unittest
import models
import api
from store import Store


class Renamed(unittest.TestCase):
    def test_account_exists_and_the_old_name_is_gone(self):
        self.assertEqual(models.Account("a", "a@x").display(), "a <a@x>")
        self.assertFalse(hasattr(models, "UserRecord"))

    def test_store_makes_accounts(self):
        s = Store()
        s.add("Bo", "bo@x")
        self.assertIsInstance(s.get("bo@x"), models.Account)

    def test_api(self):
        self.assertEqual(api.create("Cy", "cy@x"), "Cy <cy@x>")
        self.assertTrue(api.is_user(models.Account("d", "d@x")))
        self.assertFalse(api.is_user("d"))

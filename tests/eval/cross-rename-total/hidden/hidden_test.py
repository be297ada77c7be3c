import unittest
import importlib


class Renamed(unittest.TestCase):
    def test_new_name_computes_the_total(self):
        from pricing import order_total
        self.assertEqual(order_total([(10.0, 3), (2.5, 2)]), 42.0)

    def test_old_name_is_gone(self):
        import pricing
        self.assertFalse(hasattr(pricing, "calc_total"))

    def test_callers_still_work(self):
        import invoice, report
        importlib.reload(invoice)
        self.assertEqual(invoice.invoice_text("Ada", [(5.0, 1)]), "Invoice for Ada: 6.00")
        self.assertEqual(report.daily_revenue([[(1.0, 1)], [(4.0, 2)]]), 10.8)

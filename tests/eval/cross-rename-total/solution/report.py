import pricing


def daily_revenue(orders):
    """Sum of the totals of `orders` (each a list of lines)."""
    return round(sum(pricing.order_total(lines) for lines in orders), 2)

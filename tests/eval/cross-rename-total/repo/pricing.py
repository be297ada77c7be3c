TAX_RATE = 0.2


def calc_total(lines):
    """Total of (unit_price, quantity) lines, tax included, rounded to cents."""
    net = sum(price * qty for price, qty in lines)
    return round(net * (1 + TAX_RATE), 2)

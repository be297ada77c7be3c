def format_price(amount, currency="$"):
    """`amount` with two decimals and the currency sign in front."""
    return f"{currency}{amount:,.2f}"

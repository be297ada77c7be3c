def format_price(amount):
    """`amount` with two decimals and the currency sign in front."""
    return f"${amount:,.2f}"

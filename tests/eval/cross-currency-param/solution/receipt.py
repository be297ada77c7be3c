from money import format_price


def line(name, amount, currency="$"):
    return f"{name:<12}{format_price(amount, currency):>12}"


def render(items, currency="$"):
    """A receipt for (name, amount) items and their total."""
    rows = [line(name, amount, currency) for name, amount in items]
    rows.append(line("TOTAL", sum(amount for _, amount in items), currency))
    return "\n".join(rows)

from money import format_price


def line(name, amount):
    return f"{name:<12}{format_price(amount):>12}"


def render(items):
    """A receipt for (name, amount) items and their total."""
    rows = [line(name, amount) for name, amount in items]
    rows.append(line("TOTAL", sum(amount for _, amount in items)))
    return "\n".join(rows)

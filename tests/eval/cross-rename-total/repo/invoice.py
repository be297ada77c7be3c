from pricing import calc_total


def invoice_text(customer, lines):
    return f"Invoice for {customer}: {calc_total(lines):.2f}"

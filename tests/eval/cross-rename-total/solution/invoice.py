from pricing import order_total


def invoice_text(customer, lines):
    return f"Invoice for {customer}: {order_total(lines):.2f}"

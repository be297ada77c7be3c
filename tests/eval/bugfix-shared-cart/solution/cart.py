class Cart:
    def __init__(self, items=None):
        self.items = list(items) if items is not None else []

    def add(self, name, price):
        self.items.append((name, price))
        return self

    def total(self):
        return sum(price for _, price in self.items)

from models import Account


class Store:
    def __init__(self):
        self._by_email = {}

    def add(self, name, email):
        record = Account(name, email)
        self._by_email[email] = record
        return record

    def get(self, email):
        return self._by_email.get(email)

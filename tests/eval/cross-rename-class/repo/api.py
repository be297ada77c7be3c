import models
from store import Store

STORE = Store()


def create(name, email):
    return STORE.add(name, email).display()


def is_user(obj):
    return isinstance(obj, models.UserRecord)

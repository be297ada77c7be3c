from utils import normalize
from validators import is_valid_email

USERS = []


def register(email):
    email = normalize(email)
    if not is_valid_email(email):
        raise ValueError(f"not an email address: {email}")
    USERS.append(email)
    return email

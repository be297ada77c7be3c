def to_roman(n):
    """Return `n` as a Roman numeral in standard form (e.g. 1994 -> 'MCMXCIV').

    Raises ValueError unless 1 <= n <= 3999.
    """
    raise NotImplementedError

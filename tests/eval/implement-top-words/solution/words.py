import re
from collections import Counter

WORD = re.compile(r"[a-z']+")


def top_words(text, n):
    """The `n` most frequent words of `text` as (word, count) pairs."""
    counts = Counter(WORD.findall(text.lower()))
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]

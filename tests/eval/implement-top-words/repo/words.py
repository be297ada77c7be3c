import re

WORD = re.compile(r"[a-z']+")


def top_words(text, n):
    """The `n` most frequent words of `text` as (word, count) pairs.

    Words are the matches of WORD in the lower-cased text. The most frequent come
    first; words with the same count are in alphabetical order. Fewer than `n`
    pairs when the text has fewer distinct words.
    """
    raise NotImplementedError

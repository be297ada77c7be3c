def count_words(text):
    """Number of words: runs of non-whitespace characters."""
    if not text:
        return 0
    return len(text.split(" "))


def longest_word(text):
    words = text.split()
    return max(words, key=len) if words else ""

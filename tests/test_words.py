"""The compiled word scan against the regular expression of CountVectorizer."""
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sklearn_sketch.feature_extraction._words_fast import word_codes

#: scikit-learn's CountVectorizer default token_pattern, on lower-cased text.
TOKEN = re.compile(r"(?u)\b\w\w+\b")


def words_of(texts):
    indptr, codes, words = word_codes(texts)
    words = np.array(words, dtype=object)
    assert indptr[0] == 0 and (np.diff(indptr) >= 0).all() and indptr[-1] == codes.size
    return [words[codes[a:b]].tolist() for a, b in zip(indptr[:-1], indptr[1:])]


def reference(texts):
    return [TOKEN.findall(t.lower()) if isinstance(t, str) else [] for t in texts]


#: Letters, digits and marks where str.lower() or \w are not plain: a capital I with a
#: dot (lowers to two code points, the second not a word character), a combining
#: mark, Chinese, Arabic-Indic and superscript digits, a Roman numeral, a sharp s and
#: its capital, a ligature, an emoji, a vulgar fraction, the underscore.
TRICKY = [chr(c) for c in (0x130, 0x307, 0x4E2D, 0x6587, 0x660, 0xB2, 0x2163, 0xDF, 0x1E9E,
                           0xFB01, 0x1F600, 0xBD, 0x5F, 0xE9, 0xC9, 0x3A3, 0x2460, 0xA0)]


def test_random_texts_of_tricky_characters_give_the_regular_expression_s_words():
    rng = np.random.default_rng(0)
    pool = [chr(c) for c in range(32, 127)] + TRICKY
    texts = ["".join(rng.choice(pool, rng.integers(0, 80))) for _ in range(5_000)]
    texts += [None, float("nan"), "", "a", "ab", "İstanbul", "STRASSE straße ẞ"]
    assert words_of(texts) == reference(texts)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(codec="utf-8"), max_size=40), max_size=8))
def test_any_texts_give_the_regular_expression_s_words(texts):
    assert words_of(texts) == reference(texts)


def test_each_distinct_word_has_one_code_in_the_order_first_seen():
    # 60,000 distinct words of random letters (the table grows many times), each twice.
    rng = np.random.default_rng(1)
    letters = np.array(list("abcdefghij"))
    distinct = list(dict.fromkeys("".join(rng.choice(letters, 7)) for _ in range(70_000)))
    texts = [" ".join(distinct[i:i + 100]) for i in range(0, len(distinct), 100)]
    texts += [t.upper() for t in texts]
    indptr, codes, words = word_codes(texts)
    assert words == distinct
    half = indptr[len(texts) // 2]
    np.testing.assert_array_equal(codes[:half], np.arange(len(distinct)))
    np.testing.assert_array_equal(codes[half:], np.arange(len(distinct)))


def test_texts_without_words_give_empty_rows():
    indptr, codes, words = word_codes(["", "a b c", None, "- -"])
    assert indptr.tolist() == [0, 0, 0, 0, 0] and codes.size == 0 and words == []
    with pytest.raises(TypeError):
        word_codes(5)

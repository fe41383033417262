"""CSV columns of free text read as their words.

A CSV column is an attribute whose values are categories. A column of free
text (a post, a review, a ticket) holds a different value in nearly every row,
and a category per text learns nothing about a text it has not seen: 20
Newsgroups as a CSV of two columns (text, group) scored 0.049 held out, with a
warning, as categories. Read as its words, as scikit-learn's ``CountVectorizer``
tokenizes by default (lower case, words of two or more letters or digits), each
word a feature named ``column=word`` counted in its row, the same file scores
as the Vowpal Wabbit file of its words does (one pass, defaults: MISSION 0.805
against 0.808 from the VW file, feature hashing 0.827 against 0.823). Reading
the words costs about 2.5 s of the 11,314 posts' pass (the regular expression
alone 1.0 s, as in ``CountVectorizer``), in the thread that reads ahead while
the model trains.

A column is text when, in the first rows, its values are not all numbers, at
least half of them are distinct and they average at least three words. Text
columns are not crossed (a cross of every word with every value is not what
``--max-order`` means); the model keeps which columns are text, so ``predict``
and ``evaluate`` read their files alike.
"""
import re
from itertools import chain

import numpy as np

#: Words as scikit-learn's CountVectorizer finds them by default.
TOKEN = re.compile(r"(?u)\b\w\w+\b")
#: A text column's values in the first rows: at least this share distinct, ...
TEXT_DISTINCT = 0.5
#: ... and at least this many whitespace-separated words on average.
TEXT_WORDS = 3.0


def text_columns(frame, columns):
    """The columns of ``frame`` (text, as read) that hold free text, in order.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"review": ["good value for money", "it broke in a week",
    ...                                  "works as it should"],
    ...                       "city": ["Paris", "Oslo", "Paris"], "n": ["1", "2", "3"]})
    >>> text_columns(frame, ["review", "city", "n"])
    ['review']
    """
    found = []
    for column in columns:
        values = frame[column].dropna().astype(str)
        if not len(values) or values.nunique() < TEXT_DISTINCT * len(values):
            continue
        if values.str.split().str.len().mean() < TEXT_WORDS:
            continue
        found.append(column)
    return found


def text_rows(values, column):
    """The words of each text of ``values`` (a sequence or Series of str; a missing
    value has none) as rows of counts: ``(indptr, keys, counts, names)``, ``names``
    ``{key: "column=word"}`` of the distinct words. Each distinct word is named and
    hashed once.

    Examples
    --------
    >>> indptr, keys, counts, names = text_rows(["A cat, a CAT.", None, "dog"], "t")
    >>> indptr.tolist(), counts.tolist()
    ([0, 1, 1, 2], [2.0, 1.0])
    >>> [names[k] for k in keys.tolist()]
    ['t=cat', 't=dog']
    """
    import pandas as pd
    import scipy.sparse as sp

    from .._raw_features import RAW_N_FEATURES, keys_of_names

    # pandas' string methods, as the other CSV columns are read (as fast as a loop
    # over the texts: 1.25 s for 20 Newsgroups' posts, against 1.1-1.3 s).
    words = pd.Series(values, dtype=object).fillna("").str.lower().str.findall(TOKEN)
    flat = list(chain.from_iterable(words))
    keys, names = keys_of_names(flat, prefix=f"{column}=")
    lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    rows = sp.csr_matrix((np.ones(len(flat)), keys, np.concatenate([[0], np.cumsum(lengths)])),
                         shape=(len(words), RAW_N_FEATURES))
    rows.sum_duplicates()  # a word repeated in a row is one feature of its count
    return rows.indptr.astype(np.int64), rows.indices.astype(np.int64), rows.data, names

"""CSV columns of free text read as their words.

A CSV column is an attribute whose values are categories. A column of free
text (a post, a review, a ticket) holds a different value in nearly every row,
and a category per text learns nothing about a text it has not seen: 20
Newsgroups as a CSV of two columns (text, group) scored 0.049 held out, with a
warning, as categories. Read as its words, as scikit-learn's ``CountVectorizer``
tokenizes by default (lower case, words of two or more letters or digits), each
word a feature named ``column=word`` counted in its row, the same file scores
as the Vowpal Wabbit file of its words does (one pass, defaults: MISSION 0.805
against 0.808 from the VW file, feature hashing 0.827 against 0.823). The words
are found by a compiled scan (:func:`~sklearn_sketch.feature_extraction._words_fast.word_codes`,
the words of ``CountVectorizer``'s regular expression, each distinct one named
once): 0.27 s for the 11,314 posts' 3.4M words, where the regular expression
and a string a word took 0.93 s, in the thread that reads ahead while the
model trains.

A column is text when, in the first rows, its values are not all numbers, at
least half of them are distinct and they average at least three words. Text
columns are not crossed (a cross of every word with every value is not what
``--max-order`` means); the model keeps which columns are text, so ``predict``
and ``evaluate`` read their files alike.

A word's value is its TF-IDF, as ``TfidfVectorizer(sublinear_tf=True)`` gives
it: ``1 + log(count)`` times the word's inverse document frequency in the first
rows of the training file, ``log((n + 1) / (df + 1)) + 1`` (:func:`document_frequencies`;
a word seen in one of them or in none takes that of one), each text's values
then divided by their Euclidean norm. A word said ten times does not weigh ten
times one said once, a word in every post weighs little, and a long text weighs
as much as a short one. Over 20 Newsgroups in fastText's format (posts by date,
one pass, the command line's defaults), counts against TF-IDF: MISSION 0.803 ->
0.848, AWM-Sketch 0.821 -> 0.846, feature hashing 0.828 -> 0.849, BEAR 0.827 ->
0.849 (``SGDClassifier`` on ``TfidfVectorizer``'s rows 0.854); on the posts'
subject lines alone (short texts) 0.677 -> 0.696, 0.678 -> 0.694, 0.679 ->
0.694, 0.704 -> 0.703. Measured beside it: ``1 + log(count)`` alone (+1.1 to
+1.3 on the posts, within 0.2 on the subjects), the same over its norm (posts
+1.1 to +2.3, subjects -0.4 to +1.2), words present or not (+1.0 to +2.1 on
the posts). The model keeps the :data:`IDF_WORDS` words of the most rows (the
others take the weight of a word seen once: within a few percent of theirs).
"""
import numpy as np

from ..feature_extraction._words_fast import word_codes

#: A text column's values in the first rows: at least this share distinct, ...
TEXT_DISTINCT = 0.5
#: ... and at least this many whitespace-separated words on average.
TEXT_WORDS = 3.0
#: Words whose document frequency in the first rows a model keeps, per text column.
IDF_WORDS = 1 << 15
#: Characters of text tokenized at a time: a word held as a Python string costs
#: about 60 bytes, so 10,000 posts tokenized at once (20 Newsgroups' chunk) held
#: 3.3M of them, and ``fit --csv`` peaked at 0.77 GB for 21 MB of posts.
PIECE_CHARS = 1 << 21


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


def _counted(indptr, columns, n_columns):
    """CSR of the words of texts (``columns``: each word's column, text after text,
    ``indptr`` where each text's start) and each one's count in its text (a word
    repeated is one entry)."""
    import scipy.sparse as sp

    counted = sp.csr_matrix((np.ones(len(columns)), columns, indptr),
                            shape=(len(indptr) - 1, n_columns))
    counted.sum_duplicates()
    return counted


def _pieces(values, limit=PIECE_CHARS):
    """``values`` (missing as ``""``) in consecutive pieces, to tokenize one at a
    time: each ends with the text that takes the characters so far to a multiple
    of ``limit`` or past it.

    Examples
    --------
    >>> [piece.tolist() for piece in _pieces(["ab", None, "cde", "f", "gh"], limit=3)]
    [['ab', '', 'cde'], ['f'], ['gh']]
    """
    import pandas as pd

    values = pd.Series(values, dtype=object).fillna("").reset_index(drop=True)
    ends = np.cumsum(values.str.len().to_numpy())
    cuts = np.unique(np.searchsorted(ends, np.arange(limit, ends[-1] if len(ends) else 0,
                                                     limit), side="left") + 1)
    starts = [0, *cuts[cuts < len(values)].tolist()]
    for start, stop in zip(starts, [*starts[1:], len(values)]):
        yield values.iloc[start:stop]


def document_frequencies(values, max_words=IDF_WORDS):
    """``{"documents": n, "words": {word: df}}`` of texts ``values``: how many hold
    each word, for the ``max_words`` words held by the most (ties: the first seen).

    Examples
    --------
    >>> document_frequencies(["A cat, a CAT.", "the dog", None, "a dog"], max_words=2)
    {'documents': 4, 'words': {'dog': 2, 'cat': 1}}
    """
    import pandas as pd

    parts, n = [], 0
    for piece in _pieces(values):
        indptr, codes, words = word_codes(piece)
        n += len(indptr) - 1
        # Each word of a row once (a sparse sum is the fast way), then the rows of each word.
        held = _counted(indptr, codes, len(words))
        parts.append(pd.Series(np.bincount(held.indices, minlength=len(words)),
                               index=pd.Index(words, dtype=object)))
    if not parts:
        return {"documents": n, "words": {}}
    # The pieces' counts summed by word in the order first seen; the most frequent
    # first, ties the first seen first.
    counts = pd.concat(parts).groupby(level=0, sort=False).sum()
    top = counts.iloc[np.argsort(-counts.to_numpy(), kind="stable")[:max_words]]
    return {"documents": n, "words": dict(zip(top.index.tolist(), top.to_numpy().tolist()))}


class InverseDocumentFrequency:
    """The IDF weight of words by key, from ``document_frequencies``' table of a column.

    Examples
    --------
    >>> from sklearn_sketch._raw_features import name_keys
    >>> idf = InverseDocumentFrequency({"documents": 3, "words": {"dog": 2}}, "t")
    >>> idf(name_keys(["t=dog", "t=cat"])).round(3).tolist()
    [1.288, 1.693]
    """

    def __init__(self, table, column):
        from .._raw_features import name_keys

        n = table["documents"]
        keys = name_keys([f"{column}={w}" for w in table["words"]])
        weights = np.log((n + 1) / (np.array(list(table["words"].values()), float) + 1)) + 1
        order = np.argsort(keys, kind="stable")
        self.keys = keys[order]
        # The words' weights, then the weight of a word in one of the n texts, or none.
        self.weights = np.append(weights[order], np.log((n + 1) / 2) + 1)

    def __call__(self, keys):
        from .._sorted_keys import find_sorted

        rows, found = find_sorted(self.keys, keys)
        return self.weights[np.where(found, rows, len(self.keys))]


def text_rows(values, column, idf=None):
    """The words of each text of ``values`` (a sequence or Series of str; a missing
    value has none) as rows of counts, or with ``idf`` (an
    :class:`InverseDocumentFrequency`) of TF-IDF values over their norm:
    ``(indptr, keys, values, names)``, ``names`` ``{key: "column=word"}`` of the
    distinct words. Each distinct word is named and hashed once.

    Examples
    --------
    >>> indptr, keys, counts, names = text_rows(["A cat, a CAT.", None, "dog"], "t")
    >>> indptr.tolist(), counts.tolist()
    ([0, 1, 1, 2], [2.0, 1.0])
    >>> [names[k] for k in keys.tolist()]
    ['t=cat', 't=dog']
    >>> idf = InverseDocumentFrequency({"documents": 3, "words": {"cat": 1, "dog": 1}}, "t")
    >>> text_rows(["A cat, a CAT dog.", "dog"], "t", idf)[2].round(3).tolist()
    [0.861, 0.509, 1.0]
    """
    import scipy.sparse as sp

    from .._raw_features import RAW_N_FEATURES, keys_of_names

    parts, names = [], {}
    for piece in _pieces(values):
        indptr, codes, words = word_codes(piece)
        keys, named = keys_of_names(words, prefix=f"{column}=")
        names.update(named)
        parts.append(_counted(indptr, keys[codes], RAW_N_FEATURES))
    rows = (sp.vstack(parts, format="csr") if len(parts) > 1 else parts[0] if parts
            else sp.csr_matrix((0, RAW_N_FEATURES)))
    indptr, keys, data = rows.indptr.astype(np.int64), rows.indices.astype(np.int64), rows.data
    if idf is not None:
        data = (1.0 + np.log(data)) * idf(keys)
        lengths = np.diff(indptr)
        norms = np.sqrt(np.bincount(np.repeat(np.arange(len(lengths)), lengths),
                                    weights=data * data, minlength=len(lengths)))
        data = data / np.repeat(norms, lengths)
    return indptr, keys, data, names

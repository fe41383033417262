"""Model files of the command line: the estimator, its vectorizer and how it read its input.

The file is a model file of :func:`sklearn_sketch.save` (arrays and a JSON
header; loading executes nothing), with the vectorizer's parameters and the
input options in its metadata. Any other file, a pickle say, is refused.
"""
from ._errors import CommandError

_INPUT_FORMATS = (None, "reads", "svmlight", "vw", "csv")


def save_model(path, estimator, vectorizer, model_input):
    """Write the model atomically: a failed write leaves no partial file."""
    from .._model_files import save

    save(estimator, path, metadata={
        "vectorizer": None if vectorizer is None else vectorizer.get_params(),
        "input": model_input})


def load_model(path):
    """The model dict (estimator, vectorizer, input) of a file written by ``fit``."""
    from .._model_files import ModelFileError, read_model

    try:
        estimator, metadata = read_model(path)
    except ModelFileError as exc:
        raise CommandError(str(exc).splitlines()[0]) from None
    try:
        vectorizer, model_input = _check_metadata(metadata)
    except ModelFileError as exc:
        raise CommandError(f"{path} is not a model saved by sklearn-sketch fit: {exc}") from None
    return {"estimator": estimator, "vectorizer": vectorizer, "input": model_input}


def _check_metadata(metadata):
    from .._model_files import ModelFileError

    if not isinstance(metadata, dict) or set(metadata) != {"vectorizer", "input"}:
        raise ModelFileError("no command-line metadata (vectorizer, input)")
    model_input = metadata["input"]
    keys = {"format", "zero_based"} | ({"csv"} if isinstance(model_input, dict)
                                       and model_input.get("format") == "csv" else set())
    if isinstance(model_input, dict) and "interactions" in model_input:
        keys.add("interactions")
        _check_interactions_metadata(model_input)
    if (not isinstance(model_input, dict) or set(model_input) != keys
            or model_input["format"] not in _INPUT_FORMATS
            or not isinstance(model_input["zero_based"], (bool, type(None)))):
        raise ModelFileError("the input metadata must give format and zero_based")
    if "csv" in keys:
        _check_csv_metadata(model_input["csv"])
    params = metadata["vectorizer"]
    if params is None:
        return None, model_input
    from ..feature_extraction import KmerVectorizer

    if not isinstance(params, dict) or set(params) != set(KmerVectorizer().get_params()):
        raise ModelFileError("the vectorizer metadata must give the KmerVectorizer parameters")
    vectorizer = KmerVectorizer(**params)
    try:
        vectorizer._validate_params()
    except (ValueError, TypeError) as exc:
        raise ModelFileError(f"invalid vectorizer parameter: {exc}") from None
    return vectorizer, model_input


def _check_csv_metadata(csv):
    """The CSV options of a model: a label column, attribute columns, crosses of them,
    the interval edges and scales of numeric columns, the columns of free text, the
    category of a missing value, the names of a file without a header and the
    document frequencies of words in text columns (each absent in models of before
    them)."""
    from .._model_files import ModelFileError

    def strings(values):
        return isinstance(values, list) and all(isinstance(v, str) and v for v in values)

    from ._bins import check_bins, check_means, check_scales

    if (not isinstance(csv, dict)
            or not {"label", "columns", "crosses"} <= set(csv) <= {"label", "columns",
                                                                   "crosses", "bins",
                                                                   "scales", "means",
                                                                   "distinct", "text",
                                                                   "missing", "names",
                                                                   "idf", "numbers_only"}
            or not (isinstance(csv.get("missing", ""), str) and csv.get("missing", "x"))
            or not isinstance(csv["label"], str) or not strings(csv["columns"])
            or not check_bins(csv.get("bins", {}), csv["columns"])
            or not check_scales(csv.get("scales", {}), csv["columns"])
            or not check_means(csv.get("means", {}), csv.get("scales", {}))
            or not (strings(csv.get("distinct", []))
                    and set(csv.get("distinct", [])) <= set(csv.get("bins", {})))
            or not (strings(csv.get("numbers_only", []))
                    and set(csv.get("numbers_only", [])) <= set(csv.get("scales", {}))
                    and not set(csv.get("numbers_only", [])) & set(csv.get("bins", {})))
            or not isinstance(csv["crosses"], list)
            or not all(strings(c) and 2 <= len(c) <= 3 and set(c) <= set(csv["columns"])
                       for c in csv["crosses"])
            or not isinstance(csv.get("text", []), list)
            or not all(isinstance(c, str) and c in csv["columns"] for c in csv.get("text", []))
            or any(set(c) & set(csv.get("text", [])) for c in csv["crosses"])
            or not (strings(csv.get("names", [])) and set(csv["columns"]) | {csv["label"]}
                    <= set(csv.get("names", csv["columns"] + [csv["label"]])))
            or not check_idf(csv.get("idf", {}), csv.get("text", []))):
        raise ModelFileError("the CSV metadata must give a label, columns, crosses of them, "
                             "the increasing edges of numeric columns' intervals, their "
                             "positive scales and finite means, the columns read as "
                             "numbers only (scaled, without intervals), columns of free "
                             "text, not "
                             "crossed, and the name of a missing value")


def check_idf(idf, text):
    """Document frequencies of text columns: ``{column: {"documents": n, "words":
    {word: df}}}``, each df from 1 to n."""
    def count(value):
        return isinstance(value, int) and not isinstance(value, bool) and value >= 1

    return isinstance(idf, dict) and all(
        column in text and isinstance(table, dict) and set(table) == {"documents", "words"}
        and count(table["documents"]) and isinstance(table["words"], dict)
        and all(isinstance(w, str) and count(c) and c <= table["documents"]
                for w, c in table["words"].items())
        for column, table in idf.items())


def _check_interactions_metadata(model_input):
    """The namespace crosses of a model trained on Vowpal Wabbit files."""
    from .._model_files import ModelFileError
    from ..io._readers import check_interactions

    interactions = model_input["interactions"]
    try:
        if (model_input.get("format") != "vw" or not isinstance(interactions, list)
                or not interactions):
            raise ValueError("a non-empty list, for vw input only")
        check_interactions(interactions)
    except ValueError as exc:
        raise ModelFileError(f"bad interactions metadata: {exc}") from None

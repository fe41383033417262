"""Model files of the command line: the estimator, its vectorizer and how it read its input.

The file is a model file of :func:`sklearn_sketch.save` (arrays and a JSON
header; loading executes nothing), with the vectorizer's parameters and the
input options in its metadata. Any other file, a pickle say, is refused.
"""
from ._errors import CommandError

_INPUT_FORMATS = (None, "reads", "svmlight", "vw")


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
    if (not isinstance(model_input, dict) or set(model_input) != {"format", "zero_based"}
            or model_input["format"] not in _INPUT_FORMATS
            or not isinstance(model_input["zero_based"], (bool, type(None)))):
        raise ModelFileError("the input metadata must give format and zero_based")
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

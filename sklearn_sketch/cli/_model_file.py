"""Model files of the command line: the estimator, its vectorizer and how it read its input.

The file is a pickle: load only files you trust.
"""
import os
import pickle
import tempfile

from ._errors import CommandError


def save_model(path, estimator, vectorizer, model_input):
    """Write the model atomically: a failed write leaves no partial file."""
    from .. import __version__
    folder = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".sklearn-sketch-")
    try:
        with os.fdopen(handle, "wb") as f:
            pickle.dump({"estimator": estimator, "vectorizer": vectorizer,
                         "input": model_input, "version": __version__}, f)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def load_model(path):
    """The model dict of a file written by ``fit``."""
    with open(path, "rb") as f:
        try:
            model = pickle.load(f)
        except (pickle.UnpicklingError, EOFError, AttributeError, ImportError,
                ValueError) as exc:
            raise CommandError(f"{path} is not a model saved by sklearn-sketch fit ({exc})")
    if not isinstance(model, dict) or "estimator" not in model:
        raise CommandError(f"{path} is not a model saved by sklearn-sketch fit")
    model.setdefault("input", {"format": "reads" if model.get("vectorizer") else None})
    return model

"""The command line's user error."""


class CommandError(Exception):
    """A user error: reported on one line, exit status 2."""

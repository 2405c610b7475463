"""Exceptions. Every error a user can cause is a `TealeavesError` with a one-line message
that names what is wrong and where; the CLI prints it and exits with status 2."""


class TealeavesError(ValueError):
    """Base class of all input errors raised by tealeaves."""


class InvalidModelError(TealeavesError):
    """A topic model's parameters are malformed (shapes, negative/NaN values, bad alpha)."""


class InvalidCorpusError(TealeavesError):
    """A corpus or document is malformed or does not fit the model."""


class InputFileError(TealeavesError):
    """A file cannot be read, is truncated, or is not in the expected format."""


class MethodError(TealeavesError):
    """Unknown method name, unknown parameter or invalid parameter value."""


class TooLargeError(TealeavesError):
    """An exact computation was asked for a problem past its size limit."""

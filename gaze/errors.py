"""The one exception type that means "the user gave us something we cannot use".

The CLI turns it into a one-line message on stderr and exit code 2; library callers can catch it.
"""


class GazeInputError(ValueError):
    """Bad input (file, instruction, option, output path): reported in one line, exit code 2."""

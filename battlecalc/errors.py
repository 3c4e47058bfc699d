"""The one exception type the library raises for bad input."""


class BattleInputError(ValueError):
    """Invalid user input: unknown unit or edition, impossible battle, bad counts or options.

    The CLI turns it into a one-line ``Error: ...`` message and exit status 2.
    """

"""The one exception type the library raises for bad input, and how it quotes that input."""

import reprlib

QUOTE_LIMIT = 80  # characters of the user's input an error message quotes at most
_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxlist, _SHORT.maxtuple, _SHORT.maxdict = 3, 6, 6, 6
_SHORT.maxstring = _SHORT.maxother = QUOTE_LIMIT


class BattleInputError(ValueError):
    """Invalid user input: unknown unit or edition, impossible battle, bad counts or options.

    The CLI turns it into a one-line ``Error: ...`` message and exit status 2.
    """


class BattleInputWarning(UserWarning):
    """An input that is accepted but changes nothing here (a technology no unit of its side
    can use, a retreat no unit may make); the CLI prints it as ``Warning: ...``."""


def quoted(value: object) -> str:
    """repr of user input for an error message, cut to about QUOTE_LIMIT characters with an
    ellipsis (also for huge integers and deeply nested values)."""
    if isinstance(value, str):
        cut = value[:QUOTE_LIMIT - 1] + "…" if len(value) > QUOTE_LIMIT else value
        return repr(cut)
    if isinstance(value, int) and abs(value) >= 10**QUOTE_LIMIT:
        return f"{'-' if value < 0 else ''}a {value.bit_length()}-bit integer"
    text = _SHORT.repr(value)
    return text if len(text) <= QUOTE_LIMIT else text[:QUOTE_LIMIT - 1] + "…"

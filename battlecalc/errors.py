"""The one exception type the library raises for bad input, and how it quotes that input."""

import contextlib
import reprlib
import threading
import warnings

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


_collecting = threading.local()


@contextlib.contextmanager
def collected_warnings():
    """Collect the BattleInputWarnings issued in this thread (through :func:`warn_input`)
    into the list yielded, each once, instead of issuing them as Python warnings: a server
    answers them with the request that caused them (Python's warning filters and
    ``showwarning`` are the whole process's, not a thread's).  Nests: the innermost collects."""
    outer = getattr(_collecting, "sink", None)
    sink: list[str] = []
    _collecting.sink = sink
    try:
        yield sink
    finally:
        _collecting.sink = outer


def warn_input(message: str, stacklevel: int = 2) -> None:
    """Say that an input is accepted but ignored: a BattleInputWarning, or into the list of
    :func:`collected_warnings` where this thread collects them."""
    sink = getattr(_collecting, "sink", None)
    if sink is not None:
        if message not in sink:
            sink.append(message)
        return
    warnings.warn(BattleInputWarning(message), stacklevel=stacklevel + 1)


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

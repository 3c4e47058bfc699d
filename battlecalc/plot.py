"""Pictures of a result: the laws behind the charts, and a matplotlib figure of them.

:func:`distributions` turns a result into plain data (lists of ``[value, probability]``): the
web page draws its charts from it and :func:`plot_result` draws the same panels with
matplotlib (the optional extra ``battlecalc[plot]``; imported only when a figure is made).

    >>> import battlecalc
    >>> r = battlecalc.simulate(rules="revised", attacker="1 inf", defender="1 inf",
    ...                         method="exact")
    >>> [[n, round(p, 12)] for n, p in distributions(r)["attacker"]["units_left"]]
    [[0, 0.75], [1, 0.25]]
"""

from __future__ import annotations

import io
import os
from typing import Any

import numpy as np

from .army import format_army

PLOT_FORMATS = (".png", ".svg")
PANEL_TITLES = ("Outcome", "Attacker survivors", "Defender survivors", "IPC lost",
                "TUV swing", "Rounds")
OUTCOME_LABELS = {
    "attacker_win": "attacker wins",
    "defender_win": "defender wins",
    "draw": "draw",
    "stalemate": "stalemate",
    "retreat": "retreat",
    "takes_territory": "takes territory",
}
TOP_STATES = 8


def _pairs(items) -> list[list]:
    """Sorted [value, probability] pairs with plain Python numbers, zero probabilities dropped."""
    pairs = []
    for value, p in sorted(items):
        if p > 0:
            pairs.append([int(value) if float(value).is_integer() else float(value), float(p)])
    return pairs


def _law(values: np.ndarray, probabilities: np.ndarray) -> list[list]:
    """The law of `values` (one probability each) as sorted [value, probability] pairs."""
    keys, index = np.unique(values, return_inverse=True)
    return _pairs(zip(keys.tolist(), np.bincount(index, weights=probabilities).tolist(),
                      strict=True))


def _frame_pairs(frame, column: str) -> list[list] | None:
    if frame is None:
        return None
    return _law(frame[column].to_numpy(), frame["probability"].to_numpy(dtype=float))


def _side(frame) -> dict[str, Any]:
    """Units-left law, IPC-loss law and the most likely end states of one side (numpy, not
    pandas groupby: this runs on every request of the page)."""
    units = [c for c in frame.columns if c not in ("ipc_lost", "probability")]
    counts = frame[units].to_numpy(dtype=np.int64).reshape(len(frame), len(units))
    ipc = frame["ipc_lost"].to_numpy()
    probability = frame["probability"].to_numpy(dtype=float)
    top = np.argsort(-probability, kind="stable")[:TOP_STATES]
    return {
        "units_left": _law(counts.sum(axis=1), probability),
        "ipc_lost": _law(ipc, probability),
        "top": [
            {"survivors": format_army(dict(zip(units, counts[i].tolist(), strict=True))),
             "ipc_lost": int(ipc[i]), "probability": float(probability[i])}
            for i in top
        ],
    }


def distributions(result) -> dict[str, Any]:
    """The laws the charts draw, as plain data (JSON-ready).

    ``attacker`` / ``defender``: ``units_left`` (law of the number of units left),
    ``ipc_lost`` (law of the IPC lost) and ``top`` (the most likely end states); ``tuv_swing``
    (exact results only, else None) and ``rounds`` (Monte Carlo, or exact with
    ``rounds_distribution=True``, else None); ``labels`` names the axes.  A formula result
    has loss points for IPC and exchanges for rounds, and no survivor law.
    """
    if getattr(result, "attacker_distribution", None) is not None:
        rounds = _frame_pairs(result.rounds_distribution, "rounds")
        swing = _frame_pairs(result.swing_distribution, "tuv_swing")
        return {
            "attacker": _side(result.attacker_distribution),
            "defender": _side(result.defender_distribution),
            "tuv_swing": swing,
            "rounds": rounds,
            "labels": {"ipc_lost": "IPC lost", "rounds": "rounds"},
        }
    # formula combat: loss points and exchanges
    return {
        "attacker": {"units_left": None, "top": [],
                     "ipc_lost": _pairs(result.attacker_loss_points_distribution.items())},
        "defender": {"units_left": None, "top": [],
                     "ipc_lost": _pairs(result.defender_loss_points_distribution.items())},
        "tuv_swing": None,
        "rounds": _pairs(result.exchanges_distribution.items()),
        "labels": {"ipc_lost": "loss points", "rounds": "exchanges"},
    }


def outcome_rows(result) -> list[tuple[str, float, tuple[float, float] | None]]:
    """(label, probability, 95% interval or None) for each outcome bar worth showing."""
    rows = []
    for key, label in OUTCOME_LABELS.items():
        if not hasattr(result, key):
            continue
        value = getattr(result, key)
        if key == "retreat" and not value:
            continue
        if key == "takes_territory" and getattr(result, "sea", False):
            continue
        interval = None if result.method == "exact" else tuple(result.ci95.get(key, ()))
        rows.append((label, float(value), interval if interval else None))
    return rows


def check_plot_path(path: str, inputs=()) -> str | None:
    """Why `path` cannot take a figure (a message), or None; checked before any work, by the
    one writer's rules (battlecalc.output), `inputs` being the files the command reads or
    writes otherwise (the figure is not written over them)."""
    from .output import OutputError, open_destination

    if not path:
        return "--plot needs a file name ending in .png or .svg"
    extension = os.path.splitext(path)[1].lower()
    if extension not in PLOT_FORMATS:
        return f"--plot {path}: the file name must end in .png or .svg"
    if os.path.isdir(path):
        return f"--plot {path}: is a folder"
    try:
        open_destination(path, inputs)
    except OutputError as exc:
        return f"--plot {exc}"
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return "--plot needs matplotlib: pip install 'battlecalc[plot]'"
    return None


def _bars(ax, pairs, color, label=None, width=0.8):
    values = [v for v, _ in pairs]
    probabilities = [p for _, p in pairs]
    ax.bar(values, probabilities, width=width, color=color, label=label)


def _histogram(ax, pairs, color, label=None, alpha=1.0, bins=40):
    """Bars for few distinct values, a weighted histogram for many."""
    if len(pairs) <= bins:
        _bars(ax, pairs, color, label, width=_bar_width(pairs))
        return
    values = [v for v, _ in pairs]
    ax.hist(values, bins=bins, weights=[p for _, p in pairs], color=color, label=label,
            alpha=alpha)


def _bar_width(pairs) -> float:
    values = sorted(v for v, _ in pairs)
    gaps = [b - a for a, b in zip(values, values[1:], strict=False) if b > a]
    if not gaps:
        return 0.8
    # bars stay visible when a few close values sit in a wide range
    return max(0.8 * min(gaps), (values[-1] - values[0]) / 60)


def _note(ax, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, fontsize=9,
            color="0.4", wrap=True)
    ax.set_xticks([])
    ax.set_yticks([])


ATTACKER_COLOR = "#c0392b"
DEFENDER_COLOR = "#2e6da4"


def plot_result(result):
    """A matplotlib Figure of a result: outcome bars (with 95% intervals for Monte Carlo),
    each side's survivor law (units left), the IPC-loss laws, the TUV-swing law (exact
    results) and the law of rounds.  Panel titles are :data:`PANEL_TITLES`."""
    # no pyplot: no GUI backend and no global figure registry; the figure draws with Agg
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    law = distributions(result)
    figure = Figure(figsize=(12, 7.5), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(2, 3)
    outcome, a_surv, d_surv, ipc, swing, rounds = axes.flat
    how = ("exact" if result.method == "exact"
           else f"Monte Carlo, {result.trials:,} trials, seed {result.seed}")
    figure.suptitle(f"{result.rules}: {result.attacker}  attacking  {result.defender}\n"
                    f"method: {how}", fontsize=11)

    rows = outcome_rows(result)
    labels = [label for label, _, _ in rows][::-1]
    values = [value for _, value, _ in rows][::-1]
    errors = None
    if result.method != "exact":
        errors = [[max(0.0, v - ci[0]) for (_, v, ci) in rows][::-1],
                  [max(0.0, ci[1] - v) for (_, v, ci) in rows][::-1]]
    outcome.barh(labels, values, xerr=errors, color="#7f8c8d", capsize=3)
    for y, value in enumerate(values):
        inside = value > 0.75
        outcome.text(value - 0.02 if inside else value + 0.02, y, f"{value:.2%}", va="center",
                     ha="right" if inside else "left", fontsize=9,
                     color="white" if inside else "black")
    outcome.set_xlim(0, 1)
    outcome.set_title(PANEL_TITLES[0])
    outcome.set_xlabel("probability")

    for ax, side, color, title in ((a_surv, "attacker", ATTACKER_COLOR, PANEL_TITLES[1]),
                                   (d_surv, "defender", DEFENDER_COLOR, PANEL_TITLES[2])):
        ax.set_title(title)
        pairs = law[side]["units_left"]
        if pairs is None:
            _note(ax, "no survivor law for this model")
            continue
        _bars(ax, pairs, color)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("units left")
        ax.set_ylabel("probability")

    ipc.set_title(PANEL_TITLES[3])
    both = law["attacker"]["ipc_lost"] + law["defender"]["ipc_lost"]
    if len(both) <= 60:  # side by side bars, half a gap each
        width = _bar_width(both) / 2
        for side, color, shift in (("attacker", ATTACKER_COLOR, -width / 2),
                                   ("defender", DEFENDER_COLOR, width / 2)):
            _bars(ipc, [[v + shift, p] for v, p in law[side]["ipc_lost"]], color, side, width)
    else:
        for side, color in (("attacker", ATTACKER_COLOR), ("defender", DEFENDER_COLOR)):
            _histogram(ipc, law[side]["ipc_lost"], color, label=side, alpha=0.6)
    ipc.set_xlabel(law["labels"]["ipc_lost"])
    ipc.set_ylabel("probability")
    ipc.legend(fontsize=8)

    swing.set_title(PANEL_TITLES[4])
    if law["tuv_swing"]:
        _histogram(swing, law["tuv_swing"], "#8e44ad")
        swing.axvline(0, color="0.3", linewidth=0.8)
        swing.set_xlabel("TUV swing (positive favours the attacker)")
        swing.set_ylabel("probability")
    else:
        _note(swing, "no TUV-swing law for this battle\n"
                     f"(mean {getattr(result, 'tuv_swing', float('nan')):+.3f})"
              if hasattr(result, "tuv_swing") else "no TUV swing in this model")

    rounds.set_title(PANEL_TITLES[5])
    if law["rounds"]:
        shown = [pair for pair in law["rounds"] if pair[1] >= 1e-4] or law["rounds"]
        _bars(rounds, shown, "#27ae60")
        rounds.xaxis.set_major_locator(MaxNLocator(integer=True))
        rounds.set_xlabel(law["labels"]["rounds"])
        rounds.set_ylabel("probability")
    else:
        mean = getattr(result, "mean_rounds", None)
        _note(rounds, "the law of rounds: Monte Carlo, or exact with rounds_distribution"
              + (f"\n(mean {mean:.3f} rounds)" if mean is not None else ""))
    return figure


def save_plot(result, path: str) -> None:
    """Write :func:`plot_result` to `path` (.png or .svg, by extension) through the one writer
    (battlecalc.output): a file whole or not at all, its mode kept, a symlink followed, a FIFO
    or device written to.  OutputError (a BattleInputError) if it cannot be written."""
    from matplotlib import rc_context

    from .output import open_destination

    destination = open_destination(path)
    figure = plot_result(result)
    extension = os.path.splitext(path)[1].lower()
    buffer = io.BytesIO()
    # SVG text stays text (searchable, smaller) instead of glyph outlines
    with rc_context({"svg.fonttype": "none"}):
        figure.savefig(buffer, format=extension[1:], dpi=110)
    destination.write_bytes(buffer.getvalue())

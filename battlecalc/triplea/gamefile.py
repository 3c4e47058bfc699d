"""What an edition is built from (battlecalc.triplea.mapfile), read from a map's XML or from
a save (battlecalc.triplea.savefile), as the XML spells it: options as text."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class GameFile:
    game: str
    properties: dict[str, str]
    units: list[tuple[str, dict[str, str]]]  # (TripleA unit, its unitAttachment options)
    supports: list[tuple[str, str, dict[str, str]]]  # (attachment name, giver, options)
    costs: dict[str, int]

"""The defender's reactions a save's sea battle may still meet (issue 31; 1940 2E): the air bases
that may scramble into it, and the kamikaze tokens that may strike in it.

Scramble, as TripleA's BattleDelegate does before the first battle of the phase (its
ScrambleLogic, read for the rule):

* only while the battle phase has not yet scrambled (the battle delegate's ``needToScramble``:
  set again when a phase ends), with the save's "Scramble Rules In Effect" and an edition that
  scrambles (rule flag ``scramble``), and for a sea battle not yet begun;
* from the land territories within the aircraft's ``maxScrambleDistance`` of the sea zone (1:
  its neighbours), owned by a nation at war with the attacker ("Scramble From Island Only":
  islands only, a territory whose every neighbour is water);
* holding an operative air base of a nation at war with the attacker (``isAirBase``, not
  disabled, its bombing damage at most ``maxOperationalDamage``);
* the units there that may scramble (``canScramble``; the edition's fighters and tactical
  bombers), of nations at war with the attacker, not disabled and not scrambled already this
  turn, within their own ``maxScrambleDistance``.

Each base sends at most the edition's count (1940 2E: 3; TripleA resets an air base's count when
the phase starts, so a save taken before it scrambles has its full count).  Left out: sea zones
TripleA lets aircraft scramble into without a battle there (an amphibious assault's sea zone,
"Scramble To Any Amphibious Assault"), and air bases at sea (none in the five editions).

Kamikaze (BattleDelegate.doKamikazeSuicideAttacks): while the phase has still to ask for strikes
(``needToKamikazeSuicideAttacks``) and "Use Kamikaze Suicide Attacks" is on, a sea battle in a
zone whose attachment says ``kamikazeZone`` may be struck by the tokens of the zone's original
owner ("Kamikaze Suicide Attacks Done By Current Territory Owner": its owner), if that nation is
at war with the attacker: the tokens it holds of its ``suicideAttackResources``.  How many it
spends, here or in its other zones' battles, is its choice at the table (a token kept has a
value this battle does not weigh): the battle is reported with the tokens that may strike and
solved without them (``run --kamikaze N`` weighs N).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .save import BattleRecord, SaveData, UnitRecord


@dataclass(frozen=True)
class AirBase:
    """A territory whose aircraft may scramble into the battle: the edition's units and count,
    and the same per nation ([{nation, unit, count}], in the save's order)."""

    territory: str
    aircraft: dict[str, int]
    units: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"territory": self.territory, "aircraft": dict(self.aircraft),
                "units": list(self.units)}


def scramble_open(record: BattleRecord, data: SaveData, ruleset) -> bool:
    """Whether the save's battle phase has still to scramble (the caller checks that the
    battle is a sea battle not begun)."""
    return (data.scramble_pending and data.properties.get("Scramble Rules In Effect") is True
            and bool(ruleset.flags["scramble"]) and record.attacker is not None)


def air_bases(record: BattleRecord, data: SaveData, ruleset, edition_unit
              ) -> tuple[list[AirBase], list[str]]:
    """The air bases that may scramble into `record`'s sea zone, and notes on bases in reach
    that may not (out of use); edition_unit(TripleA type, hits, ruleset): the edition's unit
    (game.edition_unit)."""
    from ..reactions import scramblers

    attacker = record.attacker
    types = data.unit_types

    def enemy(nation: str | None) -> bool:
        return nation is not None and frozenset((nation, attacker)) in data.at_war

    reach = max((t.scramble_distance for t in types.values() if t.can_scramble), default=0)
    distance = _distances(record.territory, data.neighbors, reach)
    places = {t.name: t for t in data.territories}
    island_only = data.properties.get("Scramble From Island Only") is True
    able = set(scramblers(ruleset))
    bases, notes = [], []
    for name, steps in sorted(distance.items(), key=lambda i: (i[1], i[0])):
        place = places.get(name)
        if place is None or place.water or steps == 0 or not enemy(place.owner):
            continue
        if island_only and not all(places[n].water for n in data.neighbors.get(name, ())
                                   if n in places):
            continue
        sites = [u for u in place.units if types.get(u.type) and types[u.type].air_base
                 and enemy(u.owner)]
        if not sites:
            continue
        if not any(_operative(u, types) for u in sites):
            worst = max(sites, key=lambda u: u.damage)
            notes.append(f"the air base in {name} is out of use (damage {worst.damage}, "
                         f"operative to {types[worst.type].max_operational_damage}): it "
                         "scrambles nothing")
            continue
        counts: dict[tuple[str, str], int] = {}
        for u in place.units:
            kind = types.get(u.type)
            if not (kind and kind.can_scramble and enemy(u.owner) and not u.disabled
                    and not u.scrambled and steps <= kind.scramble_distance):
                continue
            unit = edition_unit(u.type, u.hits, ruleset)
            if unit in able:
                counts[(u.owner, unit)] = counts.get((u.owner, unit), 0) + 1
        if counts:
            aircraft = {n: sum(c for (_, u), c in counts.items() if u == n)
                        for n in ruleset.units}
            aircraft = {n: c for n, c in aircraft.items() if c}
            units = [{"nation": nation, "unit": unit, "count": c}
                     for (nation, unit), c in counts.items()]
            bases.append(AirBase(name, aircraft, units))
    return bases, notes


def _operative(unit: UnitRecord, types: dict) -> bool:
    most = types[unit.type].max_operational_damage
    return not unit.disabled and (most < 0 or unit.damage <= most)


def _distances(start: str, neighbors: dict, reach: int) -> dict[str, int]:
    """{territory: steps from start} for the territories at most `reach` steps away."""
    found = {start: 0}
    frontier = [start]
    for step in range(1, reach + 1):
        frontier = [n for t in frontier for n in neighbors.get(t, ()) if n not in found]
        for n in frontier:
            found.setdefault(n, step)
        frontier = list(dict.fromkeys(frontier))
    return found


def with_scrambled(rows: list[dict], bases: list[AirBase], scrambled: dict[str, int]
                   ) -> list[dict]:
    """The defender's [{nation, unit, count}] `rows` with the aircraft scrambled added
    (`scrambled`: the edition's units and counts), taken from the bases in order, each base's
    nations in the save's order; a nation's aircraft there and come are one row."""
    left = dict(scrambled)
    counts: dict[tuple[str, str], int] = {}
    for row in rows:
        key = (row["nation"], row["unit"])
        counts[key] = counts.get(key, 0) + row["count"]
    for base in bases:
        for row in base.units:
            take = min(row["count"], left.get(row["unit"], 0))
            if take:
                left[row["unit"]] -= take
                key = (row["nation"], row["unit"])
                counts[key] = counts.get(key, 0) + take
    return [{"nation": n, "unit": u, "count": c} for (n, u), c in counts.items()]


def kamikaze_threat(record: BattleRecord, place, data: SaveData, ruleset) -> dict | None:
    """{"nation", "tokens"}: who may strike `record`'s sea battle with kamikaze tokens before
    it, and how many it holds; None where none may."""
    if not (data.kamikaze_pending and ruleset.flags["kamikaze"]
            and data.properties.get("Use Kamikaze Suicide Attacks") is True
            and record.territory in data.kamikaze_zones and record.attacker is not None):
        return None
    by_owner = data.properties.get("Kamikaze Suicide Attacks Done By Current Territory Owner")
    nation = place.owner if by_owner is True else data.kamikaze_zones[record.territory]
    tokens = data.kamikaze_tokens.get(nation, 0)
    if tokens <= 0 or frozenset((nation, record.attacker)) not in data.at_war:
        return None
    return {"nation": nation, "tokens": tokens}

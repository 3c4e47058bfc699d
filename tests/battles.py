"""The battle catalogue of the suite, as plain data (keyword arguments of battlecalc.simulate).

* The exact-answer battery (BATTERY): a few hundred battles of both dice editions.
* Path battles: what each variant of the exact solver is compared on against the general path
  (LAND_MERGED, LAND_SWEPT, SEA_TWO_PHASE, sea_two_phase_random(), sea_walk_random(),
  compact_random(), PRUNE_SMALL; and the big ones of the slow tier, COMPACT_BIG and
  PRUNE_BIG_LAND).
* Monte Carlo battles (MONTE_CARLO): the battles whose Monte Carlo answer is held to the
  exact one, each with its flags (reference: an independent reference solves it; sea; slow).
* Any battle (any_battles(seed, n)): random battles of every kind and option, some refused,
  which every surface (solve_many and sweep, the command line, the web API) must answer as
  simulate does; air_loss_battles(seed, n), the same with --retreat-air-loss on each.

Random lists are functions (drawn on first use, then kept), so that importing the catalogue
builds nothing big.

The battery: each entry of BATTERY is a dict of keyword arguments for ``battlecalc.simulate``
(without ``method``) plus a short unique ``id``.  ``python tests/battles.py --write`` solves every
battle with ``method="exact"`` and freezes the answers in ``tests/fixtures/battery.json``;
tests/test_battery.py compares the package against that file.  The fixture was written from
the code as it landed (before the engine rewrite), so it pins every exact answer: rewrite the
engine, not the fixture.  Regenerate it only for a deliberate change of a rule, and say so in
the commit.

The battery is built by hand-written tables and small loops over them (no randomness), so it is
the same on every run.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import sys
import time
from dataclasses import dataclass

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "battery.json")
FORMAT = 1
EDITIONS = ("revised", "1942-2e")
SUBMERGE = ("never", "when-only-subs-left", "first-chance")
PRESETS = ("cheapest", "weakest", "smart")
RETREATS = ("retreat_after", "retreat_when_left", "retreat_when_only_air", "strafe",
            "retreat_below")

# Keys of the exact Result frozen per battle.
SCALARS = ("attacker_win", "defender_win", "draw", "stalemate", "retreat", "takes_territory",
           "mean_rounds", "attacker_ipc_loss", "defender_ipc_loss", "tuv_swing", "pruned")
SURVIVORS = ("attacker_survivors", "defender_survivors")
DISTRIBUTIONS = ("attacker_distribution", "defender_distribution", "swing_distribution",
                 "rounds_distribution")


# Every kind of battle and option simulate takes, a few at a time, each value one simulate
# accepts somewhere (some battles are refused: both must say the same)
ANY_LAND_OPTIONS = [
    ("retreat_after", [1, 2]), ("retreat_when_left", [1, 2]), ("strafe", [1]),
    ("retreat_when_only_air", [True]), ("retreat_below", [0.3, 0.6]), ("keep_land", [1]),
    ("aa_last", [True]), ("attacker_ool", ["fighter,infantry", "bomber"]),
    ("defender_ool", ["tank", "artillery"]), ("dice", ["low_luck"]),
    ("attacker_tech", ["jets", "heavy_bombers", "super_subs"]), ("defender_tech", ["jets"]),
    ("start_round", [2, 3]), ("start_step", ["attacker_fire", "defender_fire", "end_of_round"]),
    ("rounds_distribution", [True]), ("retreat_policy", ["optimal"]),
    ("optimize", ["tuv", "win"]), ("territory_value", [3]), ("hits_on_attacker", [1]),
    ("hits_on_defender", [1]), ("attacker_waiting", [{"infantry": 1}]), ("seed", [5])]
ANY_SEA_OPTIONS = [
    ("attacker_submerge", ["first-chance", "when-only-subs-left", "optimal"]),
    ("defender_submerge", ["first-chance", "when-only-subs-left", "optimal"]),
    ("retreat_after", [1, 2]), ("retreat_when_left", [2]), ("retreat_below", [0.4]),
    ("dice", ["low_luck"]), ("start_round", [2]), ("start_step", ["attacker_fire",
                                                                  "defender_fire"]),
    ("rounds_distribution", [True]), ("attacker_tech", ["super_subs"]),
    ("defender_tech", ["radar", "super_subs"]), ("attacker_ool", ["submarine"]),
    ("retreat_policy", ["optimal"]), ("scramble_from", [{"fighter": 2}]),
    ("kamikaze", [1, 2]), ("hits_on_defender", [1]), ("defender_waiting", [{"destroyer": 1}])]


def any_battles(seed: int, n: int) -> list[dict]:
    """n random battles of every kind (land, sea, amphibious; five editions) with up to two
    options each (ANY_LAND_OPTIONS / ANY_SEA_OPTIONS), method exact or auto (auto: 2,000
    trials and a seed): battles the surfaces must answer as simulate does (some of them
    refused, as simulate refuses them)."""
    rng = random.Random(seed)
    land = ["infantry", "artillery", "tank", "fighter", "bomber"]
    sea = ["submarine", "destroyer", "cruiser", "battleship", "carrier", "fighter", "transport"]

    def army(units, size):
        picked = [rng.choice(units) for _ in range(size)]
        return {u: picked.count(u) for u in dict.fromkeys(picked)}

    out = []
    for _ in range(n):
        kind = rng.choice(["land", "land", "sea", "amphibious"])
        battle = {"rules": rng.choice(["1942-2e", "revised", "1940-2e", "aa50", "classic"])}
        if kind == "sea":
            battle.update(sea=True, attacker=army(sea[:-1], rng.randint(1, 4)),
                          defender=army(sea, rng.randint(1, 4)))
        elif kind == "amphibious":
            battle.update(landing=army(land[:3], rng.randint(1, 3)),
                          defender=army(land[:3] + ["aa"], rng.randint(1, 4)))
            air = army(["fighter", "bomber"], rng.randint(0, 2))
            if air:
                battle["attacker"] = air
            ships = rng.choice([{"battleship": 1}, {"cruiser": 1}, None])
            if ships:
                battle["bombard"] = ships
        else:
            battle.update(attacker=army(land, rng.randint(1, 5)),
                          defender=army(land[:3] + ["aa", "fighter"], rng.randint(1, 5)))
        options = ANY_SEA_OPTIONS if kind == "sea" else ANY_LAND_OPTIONS
        for name, values in rng.sample(options, rng.randint(0, 2)):
            battle[name] = rng.choice(values)
        battle["method"] = rng.choice(["exact", "exact", "auto"])
        if battle["method"] == "auto":
            battle.update(trials=2000, seed=battle.get("seed", rng.randint(1, 99)))
        out.append(battle)
    return out


def air_loss_battles(seed: int, n: int) -> list[dict]:
    """n random battles as any_battles(seed, n) draws them, each with retreat_air_loss (at 0.1,
    0.4 or 0.8) on top of its options (some refused: with retreat_policy optimal, optimal
    submerging): --retreat-air-loss on every kind of battle, which every surface must answer
    as simulate does.  (A list of its own: any_battles' draws, and the golden cases made of
    them, stay as they were.)"""
    rng = random.Random(seed + 1)
    return [{**battle, "retreat_air_loss": rng.choice([0.1, 0.4, 0.8])}
            for battle in any_battles(seed, n)]


def land(edition, attacker, defender, **options):
    return dict(rules=edition, attacker=attacker, defender=defender, **options)


def amphibious(edition, landing, bombard, defender, attacker=None, **options):
    battle = dict(rules=edition, attacker=attacker, landing=landing, defender=defender)
    if bombard is not None:
        battle["bombard"] = bombard
    battle.update(options)
    return battle


def sea(edition, attacker, defender, **options):
    return dict(rules=edition, attacker=attacker, defender=defender, sea=True, **options)


# --- land battles ----------------------------------------------------------------------------

LAND_ATTACKERS = ["2 inf 1 art", "3 inf 1 tank", "2 inf 1 art 1 tank", "1 inf 1 art 2 tank",
                  "4 inf 2 art", "3 inf 1 art 1 ftr", "2 inf 2 tank 1 bmb", "2 tank 2 ftr"]
LAND_DEFENDERS = ["2 inf", "3 inf 1 tank", "4 inf", "2 inf 1 art 1 tank", "3 inf 1 ftr"]

LAND_MIDSIZE = [
    ("5 inf 2 art 2 tank", "6 inf 1 tank"),
    ("4 inf 2 art 2 tank 1 ftr", "6 inf 2 tank"),
    ("6 inf 3 art", "7 inf"),
    ("3 inf 3 tank 2 ftr", "5 inf 1 art 1 ftr"),
    ("2 inf 2 art 3 tank 1 bmb", "4 inf 2 tank 1 ftr"),
    ("8 inf", "6 inf"),
    ("1 inf", "1 inf"),
    ("1 tank", "2 inf"),
    ("1 bmb", "1 inf"),
    ("2 ftr", "1 ftr"),
    ("1 inf 1 art", "1 art 1 tank"),
    ("2 bmb 2 ftr", "2 inf 2 ftr"),
]

# Revised AA gun: one die per aircraft however many guns, each aircraft's own die
REVISED_AA = [
    (guns, aircraft, defender)
    for guns in (1, 2, 3)
    for aircraft, defender in (("2 ftr", "2 inf"), ("1 ftr 1 bmb 1 inf", "3 inf"),
                               ("3 ftr 2 bmb", "3 inf 1 tank"), ("2 bmb 2 inf", "4 inf"))
]
# 1942 AAA: up to 3 dice per gun, at most one per aircraft; the attacker chooses casualties
AAA_1942 = [
    (1, "1 ftr 1 inf", "2 inf"), (1, "2 ftr 1 bmb", "2 inf"), (1, "3 ftr 1 tank", "3 inf"),
    (1, "7 ftr", "3 inf"), (2, "2 ftr", "1 inf"), (2, "3 ftr 2 bmb", "3 inf"),
    (2, "4 ftr 1 bmb 1 inf", "3 inf 1 tank"), (2, "6 ftr", "2 inf"), (3, "3 ftr", "2 inf"),
    (3, "5 ftr 2 bmb", "4 inf"), (3, "6 ftr 1 bmb", "3 inf 1 ftr"), (3, "4 bmb 2 tank", "4 inf"),
]

TECH_BATTLES = [
    ("3 bmb", "3 inf", "heavy_bombers", None),
    ("2 bmb 2 inf 1 tank", "4 inf 1 tank", "heavy_bombers", None),
    ("2 ftr 1 bmb 2 inf", "3 inf 1 aa", "heavy_bombers,jets", None),
    ("3 ftr 2 inf", "3 inf 1 ftr", "jets", None),
    ("3 inf 1 tank 1 ftr", "3 inf 2 ftr", None, "jets"),
    ("2 tank 2 ftr", "2 inf 1 ftr 1 aa", None, "jets"),
    ("3 inf 2 tank", "3 inf 1 bmb", None, "heavy_bombers"),
    ("2 ftr 2 bmb", "2 inf 2 ftr", "heavy_bombers,jets", "jets"),
]


def land_battles() -> list[dict]:
    battles = []
    for edition in EDITIONS:
        for attacker in LAND_ATTACKERS:
            for defender in LAND_DEFENDERS:
                battles.append(land(edition, attacker, defender))
        for attacker, defender in LAND_MIDSIZE:
            battles.append(land(edition, attacker, defender))
        for attacker, defender, a_tech, d_tech in TECH_BATTLES:
            options = {}
            if a_tech:
                options["attacker_tech"] = a_tech
            if d_tech:
                options["defender_tech"] = d_tech
            battles.append(land(edition, attacker, defender, **options))
    for guns, aircraft, defender in REVISED_AA:
        battles.append(land("revised", aircraft, f"{defender} {guns} aa"))
    battles.append(land("revised", "2 ftr", "1 aa"))
    battles.append(land("revised", "1 tank 1 ftr", "1 inf 2 aa"))
    for guns, aircraft, defender in AAA_1942:
        battles.append(land("1942-2e", aircraft, f"{defender} {guns} aa"))
    battles.append(land("1942-2e", "1 tank", "1 aa"))
    battles.append(land("1942-2e", "2 inf 1 ftr", "1 inf 2 aa"))
    return battles


# --- sea battles -----------------------------------------------------------------------------

SEA_COMMON = [  # units both editions have
    ("1 bmb", "1 bb"),
    ("2 sub", "1 dd 1 tt"),
    ("3 sub", "1 dd 1 cv 1 ftr 2 tt"),
    ("2 ftr", "2 sub"),
    ("1 dd 2 ftr", "3 sub"),
    ("1 bb 1 dd", "1 bb 1 dd"),
    ("1 dbb 2 dd", "1 bb 1 sub"),
    ("1 cv 2 ftr 1 dd", "2 sub 1 dd 1 tt"),
    ("1 sub 1 ftr", "1 sub 1 ftr"),
    ("2 sub", "1 ftr 1 dd"),
    ("1 dd 1 sub", "2 tt 1 sub"),
    ("2 sub 1 bmb", "1 cv 1 ftr"),
    ("2 sub 1 bmb", "1 cv 2 ftr 1 tt"),
    ("1 bb", "2 dd"),
    ("2 dd", "1 bb"),
    ("1 bb 1 dbb", "2 bb"),
    ("2 dbb", "1 bb 1 dd"),
    ("1 bb 1 cv 2 ftr", "1 dbb 2 dd 1 sub"),
    ("2 sub", "1 sub"),
    ("1 sub", "1 dd"),
    ("1 sub", "1 cv"),
    ("1 dd", "1 tt"),
    ("1 dd", "3 tt"),
    ("2 ftr 1 bmb", "2 tt"),
    ("1 tt", "1 tt"),
    ("2 tt", "1 tt"),
    ("2 tt", "1 sub 1 dd"),
    ("2 tt 1 sub", "1 dd 1 sub"),
    ("1 tt 1 dd", "1 dd"),
    ("1 sub", "2 ftr"),
    ("2 ftr", "1 sub 1 tt"),
    ("3 sub 2 dd", "1 bb 1 cv 2 ftr"),
    ("2 dd 2 sub 1 ftr", "1 bb 2 dd 1 tt"),
    ("1 cv 2 ftr", "1 cv 2 ftr"),
    ("1 bb 2 dd 1 bmb", "1 bb 1 cv 2 ftr 1 sub"),
    ("4 sub", "2 dd 1 tt"),
]
SEA_1942 = [  # cruisers
    ("1 bb 1 dd", "1 bb 1 ca"),
    ("2 sub 1 ca", "1 ca 2 tt"),
    ("2 ca 1 ftr", "1 cv 2 ftr 1 tt"),
    ("1 ca 1 ftr", "1 sub 2 tt"),
    ("1 dbb 1 dd", "1 ca 1 sub"),
    ("2 ca", "1 bb"),
    ("1 ca 2 sub", "1 dd 1 ca"),
    ("3 ca", "1 cv 2 ftr 1 dd"),
]
SUPER_SUBS = [
    ("2 sub", "1 bb"),
    ("2 sub", "1 cv 2 ftr"),
    ("3 sub 1 dd", "2 dd 1 tt"),
]
# submerge policies: every pair on a few battles with subs on either side
SUBMERGE_BATTLES = [
    ("2 sub 1 dd", "2 sub 1 tt"),
    ("3 sub 1 ftr", "1 cv 1 ftr 2 sub"),
]
SUBMERGE_EXTRA = [
    ("3 sub", "1 dd 1 sub", "first-chance", "never"),
    ("2 sub 1 bmb", "1 cv 1 ftr", "when-only-subs-left", "never"),
    ("1 dd 1 ftr", "3 sub", "never", "first-chance"),
    ("2 sub", "1 cv 1 ftr", "first-chance", "never"),
    ("2 sub", "1 dd", "first-chance", "never"),
    ("2 ftr 1 sub", "2 sub", "when-only-subs-left", "when-only-subs-left"),
    ("2 sub 1 ftr", "1 cv 1 ftr", "first-chance", "never"),
    ("1 dd 2 sub", "2 sub 1 tt", "first-chance", "when-only-subs-left"),
]


def sea_battles() -> list[dict]:
    battles = []
    for edition in EDITIONS:
        for attacker, defender in SEA_COMMON:
            battles.append(sea(edition, attacker, defender))
        for attacker, defender in SUPER_SUBS:
            battles.append(sea(edition, attacker, defender, attacker_tech="super_subs"))
        battles.append(sea(edition, "2 dd", "3 sub", defender_tech="super_subs"))
        for attacker, defender in SUBMERGE_BATTLES:
            for a_policy in SUBMERGE:
                for d_policy in SUBMERGE:
                    battles.append(sea(edition, attacker, defender, attacker_submerge=a_policy,
                                       defender_submerge=d_policy))
        for attacker, defender, a_policy, d_policy in SUBMERGE_EXTRA:
            battles.append(sea(edition, attacker, defender, attacker_submerge=a_policy,
                               defender_submerge=d_policy))
    for attacker, defender in SEA_1942:
        battles.append(sea("1942-2e", attacker, defender))
    return battles


# --- amphibious assaults ---------------------------------------------------------------------

def amphibious_battles() -> list[dict]:
    battles = []
    for edition in EDITIONS:
        battles += [
            amphibious(edition, "1 inf", "1 bb", "1 inf"),
            amphibious(edition, "1 inf", "2 bb", "1 inf 1 ftr"),
            amphibious(edition, "2 inf", None, "2 inf"),
            amphibious(edition, "2 inf 1 tank", None, "3 inf", attacker="1 tank"),
            amphibious(edition, "1 inf 1 art", "1 bb", "2 inf"),
            amphibious(edition, "2 inf 1 art", "1 bb", "3 inf 1 aa 1 ftr", attacker="1 tank"),
            amphibious(edition, "2 inf 1 tank", "2 bb", "2 inf 1 tank 1 aa", attacker="1 ftr"),
            amphibious(edition, "3 inf 1 tank", "1 dbb", "4 inf 1 art"),
            amphibious(edition, "2 inf", "2 bb", "3 inf 1 aa", attacker="2 ftr",
                       attacker_tech="jets"),
            amphibious(edition, "1 inf 1 art", "1 bb", "2 inf 1 art 1 aa 1 ftr",
                       attacker="2 ftr 1 bmb", attacker_tech="heavy_bombers"),
            amphibious(edition, "2 tank", "1 bb", "1 aa 1 inf 2 ftr", defender_tech="jets"),
            amphibious(edition, "2 inf 1 art", "1 bb", "4 inf 1 tank",
                       attacker="2 inf 1 tank"),
        ]
    battles += [
        # Revised: combined bombardment (destroyers bombard at 3)
        amphibious("revised", "3 inf 1 art", "1 bb 2 dd", "4 inf 1 ftr",
                   attacker_tech="combined_bombardment"),
        amphibious("revised", "2 inf 1 art", "1 bb 1 dd", "2 inf 1 aa 1 ftr",
                   attacker="2 ftr 1 bmb", attacker_tech="jets,combined_bombardment",
                   defender_tech="jets"),
        amphibious("revised", "1 inf", "2 dd", "2 inf", attacker_tech="combined_bombardment"),
        amphibious("revised", "2 inf 1 tank", "1 dbb 1 dd", "3 inf 1 tank",
                   attacker_tech="combined_bombardment"),
        # 1942: cruisers, and more ships than landing units (the rest cannot bombard)
        amphibious("1942-2e", "1 inf", "2 bb", "1 inf"),
        amphibious("1942-2e", "2 inf 1 art", "1 bb 1 ca", "3 inf 1 aa 1 ftr", attacker="1 tank"),
        amphibious("1942-2e", "3 inf 1 tank", "2 ca", "4 inf 1 art"),
        amphibious("1942-2e", "2 tank", "2 ca 1 bb", "1 aa 1 inf 2 ftr"),
        amphibious("1942-2e", "1 inf 1 art", "2 bb 2 ca", "2 inf 1 art 1 aa 1 ftr",
                   attacker="2 ftr 1 bmb", attacker_tech="heavy_bombers"),
        amphibious("1942-2e", "1 inf", "1 bb 1 ca 1 dbb", "2 inf", attacker="1 tank"),
    ]
    return battles


# --- orders of losses ------------------------------------------------------------------------

def order_battles() -> list[dict]:
    battles = []
    for edition in EDITIONS:
        for preset in PRESETS:
            battles += [
                land(edition, "2 inf 1 art 1 tank 1 ftr 1 bmb", "4 inf 1 tank",
                     attacker_ool=preset),
                land(edition, "4 inf 1 tank", "2 inf 1 art 1 bmb 1 ftr", defender_ool=preset),
                land(edition, "3 inf 1 art 1 ftr", "2 inf 1 tank 1 bmb",
                     attacker_ool=preset, defender_ool=preset),
                sea(edition, "1 bb 1 dd 1 ftr 1 sub", "1 cv 2 ftr 1 dd", attacker_ool=preset,
                    defender_ool=preset),
            ]
        battles += [
            land(edition, "2 inf 1 tank 1 bmb", "3 inf", attacker_ool="bomber,tank"),
            land(edition, "2 inf 1 tank 1 bmb", "3 inf", attacker_ool="*^bomber;*^tank"),
            land(edition, "3 inf 2 ftr", "3 inf", attacker_ool="*^infantry;*^fighter;1^infantry"),
            land(edition, "3 inf 2 ftr", "3 inf", keep_land=1),
            land(edition, "3 inf 1 tank 2 ftr", "4 inf", keep_land=2),
            land(edition, "2 inf 1 tank 1 bmb", "3 inf", keep_land=1, attacker_ool="weakest"),
            land(edition, "1 tank 1 bmb", "1 tank 1 ftr", attacker_ool="bomber"),
            land(edition, "4 inf 2 tank", "3 inf 1 tank", defender_ool="tank"),
            land(edition, "3 inf 1 art", "2 inf 1 art 1 ftr",
                 defender_ool="2^infantry;*^fighter;*^artillery;*^infantry"),
            land(edition, "2 inf 2 art 1 tank", "3 inf 1 ftr",
                 attacker_ool="1^artillery;*^infantry;*^artillery;*^tank"),
            land(edition, "3 inf 1 ftr", "1 inf 1 art 2 ftr", defender_ool="fighter,artillery"),
            sea(edition, "1 bb 2 dd 1 ftr", "1 cv 2 ftr 1 sub", attacker_ool="fighter,destroyer"),
            sea(edition, "2 sub 1 dd 1 ftr", "1 cv 2 ftr 1 dd 1 tt",
                defender_ool="transport,fighter"),
            sea(edition, "1 cv 2 ftr 1 dd", "1 bb 1 dd 1 sub",
                attacker_ool="*^destroyer;1^fighter;*^carrier;*^fighter",
                defender_ool="submarine,destroyer"),
        ]
    battles += [
        land("1942-2e", "3 inf 2 ftr", "3 inf 1 aa", aa_last=True),
        land("1942-2e", "4 inf 2 art 2 ftr 1 bmb", "3 inf 2 aa 1 ftr", aa_last=True, keep_land=1,
             attacker_ool="smart"),
        land("1942-2e", "2 tank 2 ftr", "1 inf 1 tank 1 aa", aa_last=True, defender_ool="weakest"),
        land("1942-2e", "2 ftr 1 bmb 2 inf", "2 inf 2 aa", aa_last=True, attacker_ool="bomber"),
        land("1942-2e", "2 ftr 1 bmb 2 inf", "2 inf 2 aa", attacker_ool="bomber"),
    ]
    return battles


# --- retreats --------------------------------------------------------------------------------

RETREAT_LAND = [
    ("3 inf 1 art 1 tank", "4 inf 1 tank"),
    ("5 inf 2 art 2 tank", "6 inf 1 tank"),
    ("2 inf 1 tank 2 ftr", "4 inf"),
]
RETREAT_POLICIES_LAND = [
    {"retreat_after": 1}, {"retreat_after": 2}, {"retreat_when_left": 2},
    {"retreat_when_left": 3}, {"strafe": 1}, {"strafe": 2}, {"retreat_below": 0.3},
    {"retreat_below": 0.6}, {"retreat_when_only_air": True},
]
RETREAT_SEA = [
    ("3 sub 1 dd 1 ftr", "1 cv 2 ftr 1 dd 1 tt"),
    ("1 bb 2 dd", "1 bb 1 dd 2 sub"),
]
RETREAT_POLICIES_SEA = [
    {"retreat_after": 1}, {"retreat_after": 2}, {"retreat_when_left": 2}, {"strafe": 1},
    {"retreat_below": 0.4},
]


def retreat_battles() -> list[dict]:
    battles = []
    for edition in EDITIONS:
        for attacker, defender in RETREAT_LAND:
            for policy in RETREAT_POLICIES_LAND:
                battles.append(land(edition, attacker, defender, **policy))
        battles += [
            land(edition, "1 inf", "1 inf", retreat_after=1),
            land(edition, "2 inf 2 ftr", "3 inf", retreat_when_only_air=True),
            land(edition, "2 inf 1 tank 2 ftr", "4 inf", retreat_when_only_air=True,
                 defender_ool="weakest"),
            land(edition, "2 inf 1 ftr 1 bmb", "2 inf 1 aa", retreat_when_only_air=True,
                 retreat_after=2),
            land(edition, "3 inf 1 art 1 tank", "4 inf 1 tank", retreat_below=0.3,
                 attacker_ool="*^infantry;*^tank;1^infantry"),
            land(edition, "4 inf 2 tank 1 ftr", "5 inf", strafe=1, keep_land=1),
            land(edition, "4 inf 2 tank", "3 inf 1 tank", defender_ool="tank",
                 retreat_when_left=3),
            land(edition, "3 inf 2 tank", "4 inf", strafe=2, retreat_after=3),
            sea(edition, "1 sub", "1 dd", retreat_after=1),
            sea(edition, "1 sub", "1 dd", retreat_below=0.3),
            sea(edition, "2 sub 1 ftr", "1 cv 1 ftr", attacker_submerge="first-chance",
                retreat_when_left=1),
        ]
        for attacker, defender in RETREAT_SEA:
            for policy in RETREAT_POLICIES_SEA:
                battles.append(sea(edition, attacker, defender, **policy))
    battles += [
        land("1942-2e", "6 inf 2 art 2 tank 2 ftr", "8 inf 1 tank 1 aa", retreat_when_left=4),
        land("1942-2e", "3 inf 1 art 1 ftr", "3 inf 1 aa", retreat_below=0.5, keep_land=1),
    ]
    return battles


def partial_retreat_battles() -> list[dict]:
    """Amphibious assaults with a retreat policy: what may withdraw (aircraft; in 1942 also
    overland units) does, the landed units fight on."""
    battles = []
    for edition in EDITIONS:
        battles += [
            amphibious(edition, "1 inf", None, "2 inf", attacker="1 ftr", retreat_after=1),
            amphibious(edition, "1 inf", None, "2 inf", attacker="1 ftr 1 tank", retreat_after=1),
            amphibious(edition, "1 inf", None, "3 inf", attacker="1 tank", retreat_after=1),
            amphibious(edition, "1 inf", None, "3 inf", attacker="2 ftr", retreat_after=1),
            amphibious(edition, "2 inf", "1 ca" if edition == "1942-2e" else "1 bb",
                       "3 inf 1 tank", attacker="1 ftr 1 tank", retreat_below=0.5),
            amphibious(edition, "1 inf 1 tank", None, "2 inf 1 tank", attacker="2 ftr", strafe=1),
            amphibious(edition, "2 inf", None, "4 inf", attacker="1 inf 1 tank 1 ftr",
                       retreat_after=2),
            amphibious(edition, "2 inf", "1 bb", "3 inf", attacker="1 ftr", retreat_after=1),
            amphibious(edition, "1 inf 1 tank", "1 bb", "2 inf 1 ftr 1 aa", attacker="1 ftr",
                       retreat_after=1, defender_ool="weakest"),
            amphibious(edition, "1 inf 1 art", "1 bb", "2 inf 1 aa 1 ftr",
                       attacker="2 ftr 1 inf", retreat_below=0.5, defender_ool="infantry"),
            amphibious(edition, "2 inf", None, "3 inf", attacker="2 tank 1 ftr",
                       retreat_when_left=3),
            amphibious(edition, "1 inf 1 art", None, "3 inf", attacker="1 ftr 1 bmb",
                       retreat_when_only_air=True),
        ]
    battles += [
        amphibious("1942-2e", "2 inf 1 art", "1 bb", "4 inf 1 aa", attacker="2 ftr 1 tank",
                   retreat_after=1),
        amphibious("1942-2e", "2 inf", "1 bb 2 ca", "4 inf", attacker="2 inf 1 art",
                   retreat_after=2),
        amphibious("revised", "2 inf", "1 bb 1 dd", "3 inf 1 tank", attacker="1 ftr 1 bmb",
                   attacker_tech="combined_bombardment", retreat_after=1),
    ]
    return battles


# --- the exact law of rounds -----------------------------------------------------------------

ROUNDS_LAND = [
    ("1 inf", "1 inf"),
    ("3 inf 1 art 1 tank", "4 inf 1 tank"),
    ("2 inf 2 art", "3 inf"),
    ("5 inf 2 art 2 tank", "6 inf 1 tank"),
    ("2 ftr 1 bmb 2 inf", "3 inf 1 aa"),
    ("8 inf", "6 inf"),
]


def rounds_battles() -> list[dict]:
    battles = []
    for edition in EDITIONS:
        for attacker, defender in ROUNDS_LAND:
            battles.append(land(edition, attacker, defender, rounds_distribution=True))
        battles += [
            land(edition, "3 inf 1 art 1 tank", "4 inf 1 tank", retreat_after=2,
                 rounds_distribution=True),
            land(edition, "3 inf 1 art 1 tank", "4 inf 1 tank", retreat_below=0.4,
                 rounds_distribution=True),
            land(edition, "2 inf 1 tank 2 ftr", "4 inf", retreat_when_only_air=True,
                 rounds_distribution=True),
            land(edition, "3 inf 1 bmb", "3 inf 1 tank", attacker_ool="smart",
                 attacker_tech="heavy_bombers", rounds_distribution=True),
            amphibious(edition, "2 inf 1 art", "1 bb", "3 inf 1 ftr", attacker="1 tank",
                       rounds_distribution=True),
        ]
    return battles


# --- larger battles: bigger laws of survivors ------------------------------------------------

LARGE_LAND = [
    ("10 inf 5 art 3 tank", "12 inf 2 art 2 tank"),
    ("6 inf 2 art 2 tank 2 ftr", "8 inf 1 tank 1 aa"),
    ("6 inf 2 art 3 tank 2 ftr 1 bmb", "8 inf 2 tank 1 aa"),
    ("6 ftr 2 bmb 2 tank", "6 inf 2 aa"),
    ("8 inf 4 art 4 tank", "10 inf 2 tank 1 ftr"),
    ("12 inf 4 art", "14 inf"),
]
LARGE_SEA = [
    ("4 sub 2 dd 1 cv 2 ftr 1 bb", "1 bb 2 cv 4 ftr 2 dd 1 sub"),
    ("3 sub 2 dd 1 cv 2 ftr 1 bb 1 bmb", "1 bb 1 cv 2 ftr 2 dd 2 sub 2 tt"),
]


def large_battles() -> list[dict]:
    battles = []
    for edition in EDITIONS:
        for attacker, defender in LARGE_LAND:
            battles.append(land(edition, attacker, defender))
        for attacker, defender in LARGE_SEA:
            battles.append(sea(edition, attacker, defender))
        battles += [
            land(edition, "6 inf 2 art 3 tank 2 ftr 1 bmb", "8 inf 2 tank 1 aa",
                 attacker_ool="smart", defender_ool="weakest", retreat_below=0.5),
            land(edition, "10 inf 5 art 3 tank", "12 inf 2 art 2 tank", retreat_when_left=6,
                 rounds_distribution=True),
            land(edition, "6 inf 2 art 2 tank 2 ftr", "8 inf 1 tank 1 aa", keep_land=2,
                 strafe=3, attacker_tech="heavy_bombers,jets", defender_tech="jets"),
            sea(edition, "4 sub 2 dd 1 cv 2 ftr 1 bb", "1 bb 2 cv 4 ftr 2 dd 1 sub",
                attacker_submerge="first-chance", defender_submerge="when-only-subs-left",
                retreat_when_left=4, attacker_ool="smart"),
            amphibious(edition, "4 inf 2 art 2 tank", "2 bb", "8 inf 2 tank 1 aa 1 ftr",
                       attacker="4 ftr 2 bmb"),
            amphibious(edition, "4 inf 2 art 2 tank", "2 bb", "8 inf 2 tank 1 aa 1 ftr",
                       attacker="2 ftr 1 bmb", retreat_after=2),
        ]
    # (aa_last with a defending fighter and bombardment is refused: the AAA, a land unit, would
    # be lost after the fighter)
    battles.append(amphibious("1942-2e", "4 inf 2 art 2 tank", "2 bb 2 ca", "8 inf 2 tank 2 aa",
                              attacker="4 ftr 2 bmb", aa_last=True))
    battles.append(amphibious("revised", "4 inf 2 art 2 tank", "2 bb 2 dd",
                              "8 inf 2 tank 1 aa 1 ftr", attacker="4 ftr 2 bmb",
                              attacker_tech="combined_bombardment,heavy_bombers"))
    return battles


# --- ids and the list ------------------------------------------------------------------------

_SHORT = {"rules": None, "attacker": None, "defender": None, "sea": None, "landing": None,
          "bombard": None}


def battle_id(battle: dict) -> str:
    """A short readable id from the kwargs (unique over BATTERY, checked below)."""
    def army(text):
        return "".join((text or "").split())

    edition = {"revised": "rev", "1942-2e": "42"}[battle["rules"]]
    kind = "sea" if battle.get("sea") else ("amph" if battle.get("landing") else "land")
    attacker = army(battle.get("attacker"))
    if battle.get("landing"):
        attacker = "+".join(filter(None, (attacker, "L" + army(battle["landing"]))))
        if battle.get("bombard"):
            attacker += "@" + army(battle["bombard"])
    extras = []
    for key, value in battle.items():
        if key in _SHORT:
            continue
        value = "".join(str(value).split())
        extras.append(key if value == "True" else f"{key}={value}")
    return (f"{edition}:{kind}:{attacker}-v-{army(battle['defender'])}"
            + (f"[{';'.join(extras)}]" if extras else ""))


def _build() -> list[dict]:
    battles = []
    seen = set()
    for battle in (*land_battles(), *sea_battles(), *amphibious_battles(), *order_battles(),
                   *retreat_battles(), *partial_retreat_battles(), *rounds_battles(),
                   *large_battles()):
        battle = {k: v for k, v in battle.items() if v is not None}
        ident = battle_id(battle)
        if ident in seen:
            continue  # the same battle reached from two tables
        seen.add(ident)
        battles.append({"id": ident, **battle})
    return battles


BATTERY = _build()


def kwargs_of(battle: dict) -> dict:
    return {k: v for k, v in battle.items() if k != "id"}


# =============================================================================================
# Monte Carlo battles: battles whose Monte Carlo answer is held to the exact one at a fixed seed
# (tests/test_verification.py: every dice edition, land, amphibious and sea, the policies, low
# luck; its mutation tests show that the band catches broken rules)


@dataclass(frozen=True)
class Entry:
    """A catalogue battle: simulate's keyword arguments (no method, trials or seed) and its
    flags: reference, an independent reference (tests/references) solves it in the tests;
    slow, its runs belong to the slow tier; sea, a sea battle."""

    kwargs: dict
    reference: bool = False
    slow: bool = False

    @property
    def sea(self) -> bool:
        return bool(self.kwargs.get("sea"))

    @property
    def id(self) -> str:
        return mc_id(self.kwargs)


_VERIFICATION = [
    # --- land, Revised: artillery, AA gun against several aircraft, techs, AA-only defender
    land("revised", "3 inf 1 art 1 tank", "4 inf 1 tank"),
    land("revised", "4 inf 2 art 2 tank", "6 inf 1 tank"),
    land("revised", "2 ftr 2 bmb 2 inf", "3 inf 1 aa"),
    land("revised", "4 ftr 1 bmb 1 tank", "4 inf 1 aa"),
    land("revised", "6 ftr 2 bmb 2 tank", "6 inf 2 aa"),
    land("revised", "3 bmb 2 inf", "4 inf 1 aa", attacker_tech="heavy_bombers"),
    land("revised", "3 ftr 2 inf 1 tank", "4 inf 2 ftr", defender_tech="jets"),
    land("revised", "2 ftr", "1 aa"),
    # --- land, 1942 2E: artillery, AAA (up to 3 dice each, casualties), techs
    land("1942-2e", "3 inf 3 art", "5 inf"),
    land("1942-2e", "6 inf 2 art 2 tank 2 ftr", "8 inf 1 tank 1 aa"),
    land("1942-2e", "4 inf 4 art", "4 inf 2 art 1 tank"),
    land("1942-2e", "2 ftr 2 bmb 2 tank", "3 inf 2 aa", attacker_tech="heavy_bombers,jets"),
    land("1942-2e", "2 bmb 1 tank", "2 inf 1 aa", attacker_tech="heavy_bombers"),
    land("1942-2e", "5 ftr 1 tank", "3 inf 1 aa 1 ftr"),
    land("1942-2e", "10 inf 5 art 3 tank", "12 inf 2 art 2 tank"),
    # --- land: retreat policies (outcome "retreat") and orders of losses
    land("revised", "5 inf 2 art 2 tank", "6 inf 1 tank", retreat_after=2),
    land("revised", "2 inf 1 tank 2 ftr", "4 inf", retreat_when_only_air=True,
         defender_ool="weakest"),
    land("1942-2e", "6 inf 2 art 2 tank 2 ftr", "8 inf 1 tank 1 aa", retreat_when_left=4),
    land("1942-2e", "3 inf 1 art 1 tank", "4 inf 1 tank", retreat_below=0.3,
         attacker_ool="*^infantry;*^tank;1^infantry"),
    land("1942-2e", "4 inf 2 tank 1 ftr", "5 inf", strafe=1),
    land("1942-2e", "4 inf 2 art 2 ftr 1 bmb", "3 inf 2 aa 1 ftr", aa_last=True, keep_land=1,
         attacker_ool="smart"),
    # --- amphibious assaults: landing units, shore bombardment, overland support
    amphibious("1942-2e", "2 inf 1 art", "1 bb 1 ca", "3 inf 1 aa 1 ftr", attacker="1 tank"),
    amphibious("1942-2e", "3 inf 1 tank", "2 ca", "4 inf 1 art"),
    amphibious("1942-2e", "2 inf", "2 bb", "3 inf 1 aa", attacker="2 ftr", attacker_tech="jets"),
    amphibious("1942-2e", "1 inf 1 art", "1 bb", "2 inf"),
    amphibious("revised", "2 inf 1 tank", "2 bb", "2 inf 1 tank 1 aa", attacker="1 ftr"),
    amphibious("revised", "3 inf 1 art", "1 bb 2 dd", "4 inf 1 ftr",
               attacker_tech="combined_bombardment"),
    amphibious("1942-2e", "2 inf 1 art", "1 bb", "4 inf 1 aa", attacker="2 ftr 1 tank",
               retreat_after=1),
    # --- sea, 1942 2E: subs with and without destroyers, air against subs, two-hit
    # battleships (healthy and damaged), carriers, transports, cruisers, stalemates, submerging
    sea("1942-2e", "2 sub", "1 dd 1 tt"),
    sea("1942-2e", "3 sub", "1 dd 1 cv 1 ftr 2 tt"),
    sea("1942-2e", "2 ftr", "2 sub"),
    sea("1942-2e", "1 dd 2 ftr", "3 sub"),
    sea("1942-2e", "1 bb 1 dd", "1 bb 1 ca"),
    sea("1942-2e", "1 dbb 2 dd", "1 bb 1 sub"),
    sea("1942-2e", "1 cv 2 ftr 1 dd", "2 sub 1 dd 1 tt"),
    sea("1942-2e", "2 sub 1 ca", "1 ca 2 tt"),
    sea("1942-2e", "2 ca 1 ftr", "1 cv 2 ftr 1 tt"),
    sea("1942-2e", "1 sub 1 ftr", "1 sub 1 ftr"),
    sea("1942-2e", "2 sub", "1 ftr 1 dd"),
    sea("1942-2e", "1 dd 1 sub", "2 tt 1 sub"),
    sea("1942-2e", "3 sub", "1 dd 1 sub", attacker_submerge="first-chance"),
    sea("1942-2e", "2 sub 1 bmb", "1 cv 1 ftr", attacker_submerge="when-only-subs-left"),
    sea("1942-2e", "1 dd 1 ftr", "3 sub", defender_submerge="first-chance"),
    sea("1942-2e", "2 sub 1 dd", "2 sub 1 tt", defender_submerge="when-only-subs-left"),
    # --- sea, Revised
    sea("revised", "2 ftr", "2 sub"),
    sea("revised", "2 sub 1 dd", "1 bb 1 tt"),
    sea("revised", "1 bb 1 cv 2 ftr", "1 dbb 2 dd 1 sub"),
    sea("revised", "3 sub", "1 dd 2 tt", attacker_submerge="first-chance"),
    sea("revised", "2 dd 1 ftr", "3 sub", defender_submerge="when-only-subs-left"),
    sea("revised", "2 tt 1 sub", "1 dd 1 sub"),
    sea("revised", "2 sub 1 bmb", "1 cv 2 ftr 1 tt"),
    # --- low-luck dice: land with AA and artillery, sea with subs, air and destroyers
    land("1942-2e", "3 inf 1 art 2 tank 2 ftr", "5 inf 1 tank 1 aa", dice="low_luck"),
    land("revised", "4 inf 3 ftr 2 bmb", "4 inf 1 aa", dice="low_luck"),
    sea("1942-2e", "2 sub 1 dd 2 ftr", "1 dd 1 cv 1 ftr 1 sub", dice="low_luck"),
    sea("revised", "2 sub 1 bb", "1 dd 1 cv 2 sub", dice="low_luck"),
    # --- Classic: artillery, the one-die-per-aircraft AA gun (attacker chooses, several guns
    # still one die per aircraft), heavy bombers' 3 dice, jets on defence, bombardment without
    # a limit whose casualties fire back, no amphibious retreat; at sea the attacker's sneak
    # attack (cancelled by a destroyer), defending subs firing with the others, air on subs,
    # one-hit battleships, lone transports
    land("classic", "3 inf 1 art 1 tank", "4 inf 1 tank"),
    land("classic", "2 ftr 1 bmb 2 inf", "3 inf 1 aa"),
    land("classic", "4 ftr 2 bmb 1 tank", "4 inf 2 aa"),
    land("classic", "3 bmb 1 inf", "4 inf", attacker_tech="heavy_bombers"),
    land("classic", "4 inf 2 tank", "3 inf 2 ftr", defender_tech="jets"),
    land("classic", "5 inf 2 art 2 tank", "6 inf 1 tank", retreat_after=2),
    amphibious("classic", "2 inf 1 art", "2 bb", "3 inf 1 ftr", attacker="1 tank"),
    amphibious("classic", "2 inf", "1 bb", "3 inf", attacker="1 ftr 1 tank", retreat_after=1),
    sea("classic", "2 sub", "1 tt 1 cv"),
    sea("classic", "2 sub 1 bb", "2 sub 1 tt"),
    sea("classic", "1 bb 1 cv 2 ftr", "2 sub 1 dd"),
    sea("classic", "2 sub 1 ftr", "2 sub 1 cv"),
    sea("classic", "2 tt 1 sub", "1 dd 1 sub"),
    sea("classic", "3 sub 1 dd", "1 bb 1 cv 1 ftr", attacker_tech="super_subs"),
    # --- AA50: the Revised AA gun (own aircraft) with radar, improved artillery, both heavy
    # bombers, jets on attack; the 1942 2E amphibious and sea battles with AA50's units
    land("aa50", "3 inf 1 art 1 tank", "4 inf 1 tank"),
    land("aa50", "2 ftr 2 bmb 2 inf", "3 inf 1 aa"),
    land("aa50", "4 ftr 1 bmb 1 tank", "4 inf 1 aa", defender_tech="radar"),
    land("aa50", "4 inf 2 art", "5 inf", attacker_tech="improved_artillery"),
    land("aa50", "2 bmb 2 inf", "3 inf 1 bmb", attacker_tech="lhtr_heavy_bombers",
         defender_tech="lhtr_heavy_bombers"),
    land("aa50", "3 ftr 2 inf 1 tank", "4 inf 1 ftr", attacker_tech="jets"),
    land("aa50", "4 inf 2 art 2 tank", "6 inf 1 aa", strafe=2),
    amphibious("aa50", "2 inf 1 art", "1 bb 1 ca", "3 inf 1 aa 1 ftr", attacker="1 tank"),
    amphibious("aa50", "2 inf", "2 bb", "3 inf", attacker="1 ftr 1 tank", retreat_after=1),
    sea("aa50", "2 sub 1 dd", "1 bb 1 tt"),
    sea("aa50", "1 dd 2 ftr", "3 sub"),
    sea("aa50", "1 bb 1 cv 2 ftr", "1 dbb 2 dd 1 sub"),
    sea("aa50", "3 sub", "1 dd 1 sub", attacker_submerge="first-chance"),
    sea("aa50", "1 dd 1 ftr", "3 sub", defender_submerge="when-only-subs-left"),
    # --- 1940 2E: mechanized infantry supported by artillery, tactical bombers paired with
    # fighters and tanks, AAA, techs, orders of losses and retreats; amphibious assaults with
    # mech infantry; at sea two-hit carriers (healthy and damaged), tactical bombers, submerging
    land("1940-2e", "2 inf 2 mech 2 art 1 tank", "5 inf 1 tank"),
    land("1940-2e", "3 mech 2 art", "4 inf"),
    land("1940-2e", "2 mech 2 art 1 tank", "3 inf 1 art", attacker_tech="improved_artillery"),
    land("1940-2e", "2 tac 1 ftr 1 tank 2 inf", "4 inf 1 aa"),
    land("1940-2e", "3 tac 2 tank", "4 inf 1 tank"),
    land("1940-2e", "2 tac 2 ftr", "3 inf 1 ftr"),
    land("1940-2e", "2 ftr 1 tac 2 bmb", "3 inf 2 aa", attacker_tech="heavy_bombers,jets",
         defender_tech="radar"),
    land("1940-2e", "4 inf 2 mech 2 art 2 tank", "6 inf 1 aa 1 tac", aa_last=True),
    land("1940-2e", "3 inf 1 mech 1 art 1 tac 1 ftr", "5 inf", retreat_when_left=3,
         attacker_ool="smart"),
    land("1940-2e", "2 inf 1 tank 2 tac", "4 inf", retreat_below=0.3),
    amphibious("1940-2e", "2 mech 1 art", "1 bb 1 ca", "3 inf 1 aa", attacker="1 tank 1 tac"),
    amphibious("1940-2e", "2 inf 1 mech", "1 bb", "3 inf 1 tank", attacker="2 ftr",
               retreat_after=1),
    sea("1940-2e", "2 bmb", "1 cv 1 dd"),
    sea("1940-2e", "1 bb 2 dd", "2 cv 1 ftr"),
    sea("1940-2e", "2 tac 2 ftr", "1 cv 2 ftr 1 dd"),
    sea("1940-2e", "1 dcv 2 tac 1 dd", "2 sub 1 ca"),
    sea("1940-2e", "3 sub 1 tac", "1 cv 1 ftr 1 tt", attacker_submerge="when-only-subs-left"),
    sea("1940-2e", "1 dd 2 tac", "3 sub", defender_submerge="first-chance"),
    sea("1940-2e", "2 sub 1 dd 1 ca", "1 dcv 1 dbb 1 sub 1 tt"),
]
MONTE_CARLO = tuple(Entry(battle) for battle in _VERIFICATION)


def mc_id(battle: dict) -> str:
    """A Monte Carlo battle's test id: edition, kind, armies, options."""
    def short(army):
        return "".join((army or "").split())

    kind = "sea" if battle.get("sea") else ("amph" if battle.get("landing") else "land")
    attacker = short(battle["attacker"])
    if battle.get("landing"):
        attacker = "+".join(filter(None, (attacker, short(battle["landing"]))))
        attacker += "@" + short(battle["bombard"])
    extras = [f"{k}={v}" for k, v in battle.items()
              if k not in ("rules", "attacker", "defender", "sea", "landing", "bombard")]
    return (f"{battle['rules']}:{kind}:{attacker}-v-{short(battle['defender'])}"
            + (f"[{','.join(extras)}]" if extras else ""))



# =============================================================================================
# The page's screens: one battle of each kind as the page's URL query (tests/test_browser.py,
# and the page's requests without a browser: tests/test_options.py)

PAGE_SCREENS = {
    "land": "/?rules=1942-2e&attacker=3+inf+1+art+2+tank+1+ftr&defender=5+inf+1+tank+1+aa",
    "sea": "/?rules=1942-2e&sea=1&attacker=2+sub+1+dd+1+ftr&defender=1+dd+1+cv+1+ftr",
    "amphibious": "/?rules=1942-2e&kind=amphibious&attacker=1+tank&landing=3+inf&bombard=1+bb"
                  "&defender=3+inf",
    "raid": "/?rules=1940-2e&kind=raid&attacker=2+bomber+1+fighter&defender=1+fighter"
            "&facility=major",
    "plan": "/?rules=1942-2e&kind=plan&defender=3+inf&pool=6+inf+2+art+2+tank",
    "waves": "/?rules=1942-2e&attacker=3+inf+1+tank&defender=4+inf&waves=2+inf+1+tank"
             "&counterattack=2+inf",
    "formula": "/?rules=formula&attacker=3+army&defender=2+army",
}


# =============================================================================================
# Kernel battles: small battles that together reach every kernel (checked), run in plain
# Python and compiled (tests/kernels/test_plain.py), and through every exact path with numba's
# allocation counts (tests/fresh_checks.py)

# each runs exactly and by Monte Carlo: the land fast path and the general round, sea rules
# (submarines, submerging, lone transports that fire once and retreat), amphibious assaults
# with bombardment and a partial retreat (the stayers' blocks), AA fire, low luck, the law of
# rounds, --retreat-below's win-value sweep, the decisions' backward induction, and the
# formula model's kernels
PLAIN_KERNELS = {
    "land": dict(rules="revised", attacker="3 inf 1 art 1 tank 1 ftr", defender="3 inf 1 aa",
                 rounds_distribution=True),
    "land, retreat below": dict(rules="1942-2e", attacker="3 inf 2 tank", defender="4 inf",
                                retreat_below=0.4),
    "sea": dict(rules="1942-2e", attacker="2 sub 1 dd 1 ftr", defender="1 dd 1 cv 1 ftr 1 sub",
                sea=True, defender_submerge="when-only-subs-left"),
    "sea, general round": dict(rules="revised", attacker="2 sub 1 bb", defender="1 dd 1 tt",
                               sea=True, attacker_submerge="first-chance"),
    "sea, lone transports": dict(rules="revised", attacker="2 tt", defender="1 dd", sea=True),
    "amphibious": dict(rules="1942-2e", attacker="1 inf 1 tank 1 ftr", landing="2 inf 1 art",
                       bombard="1 bb", defender="3 inf 1 aa 1 ftr", retreat_after=2),
    "low luck, land": dict(rules="revised", attacker="3 inf 2 art 1 bmb", defender="4 inf 1 aa",
                           dice="low_luck"),
    "low luck, sea": dict(rules="1942-2e", attacker="1 sub 2 dd", defender="1 cv 1 ftr 1 tt",
                          sea=True, dice="low_luck"),
    "formula": dict(rules="formula", attacker="3 army, 1 air", defender="3 army"),
    # (solved in a compact mass table, as a big sea battle is: Limits.compact_pairs 0)
    "sea, compact table": dict(rules="1942-2e", attacker="2 sub 1 ftr 1 dd",
                               defender="2 sub 1 ftr 1 cv", sea=True, rounds_distribution=True),
    # the decisions: the optimal retreat and both sides' submerge choices
    "sea, decisions": dict(rules="1942-2e", attacker="1 sub 1 dd 1 ftr",
                           defender="1 sub 1 ca 1 ftr", sea=True, retreat_policy="optimal",
                           attacker_submerge="optimal", defender_submerge="optimal"),
}
PLAIN_KERNELS_COMPACT = {"sea, compact table"}

# a battle through each of the exact solver's paths (and the Monte Carlo kernel): 1942 2E
# unless said; rounds_law: the result's law of rounds read; compact: a compact mass table
EXACT_PATHS = {
    "sea, two-phase round": dict(attacker="8 sub 2 carrier",
                                 defender="6 transport 3 cruiser 2 carrier 2 fighter", sea=True),
    "sea, strikes both ways": dict(attacker="3 sub 2 destroyer 1 fighter",
                                   defender="2 sub 1 cruiser 1 carrier", sea=True),
    "sea, lone transports (revised)": dict(rules="revised", attacker="2 transport 1 destroyer",
                                           defender="1 sub 1 destroyer", sea=True),
    "sea walk": dict(attacker="3 battleship 2 cruiser", defender="4 destroyer 1 carrier",
                     sea=True),
    "land walk": dict(attacker="10 inf 5 tank 3 fighter", defender="12 inf 2 art 2 fighter"),
    "land, merged AA blocks": dict(attacker="6 fighter 2 bomber 4 inf", defender="5 inf 2 aa"),
    "land, rounds law": dict(attacker="6 inf 2 art", defender="5 inf", rounds_law=True),
    "land, retreat below": dict(attacker="6 inf 2 tank", defender="7 inf",
                                retreat_below=0.4),
    "amphibious, bombard, partial retreat": dict(attacker="1 fighter 1 tank", landing="2 inf",
                                                 bombard="1 battleship", defender="3 inf",
                                                 retreat_after=1),
    "sea, compact table": dict(attacker="6 sub 4 fighter 2 destroyer",
                               defender="5 sub 3 fighter 2 carrier 1 destroyer", sea=True,
                               compact=True),
}


# solve_many's mixed batch (tests/test_solve_many.py): land (with and without AA fire), sea
# (subs, two-hit ships, submerging), amphibious assaults (bombardment, a partial retreat), low
# luck, technologies, orders of losses, retreats, several editions; and battles that simulate
# solves on their own (Monte Carlo, --retreat-below, the law of rounds, a formula edition, a
# larger battle).
SOLVE_MANY_MIXED = [
    {"rules": "revised", "attacker": "1 inf", "defender": "1 inf"},
    {"rules": "1942-2e", "attacker": "3 inf 1 art 2 tank", "defender": "4 inf 1 tank"},
    {"rules": "1942-2e", "attacker": "2 inf 1 tank 2 ftr 1 bmb", "defender": "3 inf 1 aa"},
    {"rules": "revised", "attacker": "2 inf 2 ftr", "defender": "2 inf 1 aa",
     "attacker_ool": "fighter,infantry"},
    {"rules": "1942-2e", "attacker": "2 sub 1 dd 1 ftr", "defender": "1 dd 2 sub 1 cv",
     "sea": True},
    {"rules": "1942-2e", "attacker": "1 bb 1 ca 2 sub", "defender": "2 dd 1 bb", "sea": True,
     "attacker_submerge": "when-only-subs-left", "defender_submerge": "first-chance"},
    {"rules": "revised", "attacker": "2 sub 1 bmb", "defender": "2 sub 1 ftr 1 tt",
     "sea": True},
    {"rules": "classic", "attacker": "3 inf 1 tank", "defender": "3 inf"},
    {"rules": "1940-2e", "attacker": "2 inf 1 mech_infantry 1 tank 1 tactical_bomber",
     "defender": "3 inf 1 art 1 aa"},
    {"rules": "1942-2e", "attacker": "1 tank 1 ftr", "landing": "3 inf 1 art",
     "bombard": "1 bb 1 ca", "defender": "4 inf"},
    {"rules": "1942-2e", "attacker": "2 inf 1 ftr", "landing": "2 inf", "defender": "4 inf",
     "retreat_when_left": 2},
    {"rules": "revised", "landing": "3 inf", "bombard": "1 bb", "defender": "2 inf"},
    {"rules": "1942-2e", "attacker": "4 inf 2 art", "defender": "5 inf", "dice": "low_luck"},
    {"rules": "1942-2e", "attacker": "2 sub 2 dd", "defender": "3 dd 1 cv 1 ftr", "sea": True,
     "dice": "low_luck"},
    {"rules": "1942-2e", "attacker": "3 inf 2 bmb", "defender": "5 inf",
     "attacker_tech": "heavy_bombers"},
    {"rules": "1942-2e", "attacker": "2 sub 1 dd", "defender": "2 dd 1 tt", "sea": True,
     "attacker_tech": ["super_subs"], "defender_ool": "transport,destroyer"},
    {"rules": "1942-2e", "attacker": "4 inf 1 tank 1 ftr", "defender": "5 inf",
     "retreat_after": 2},
    {"rules": "1942-2e", "attacker": "6 inf", "defender": "6 inf", "strafe": 2},
    {"rules": "1942-2e", "attacker": "3 inf 2 ftr", "defender": "4 inf",
     "retreat_when_only_air": True},
    {"rules": "1942-2e", "attacker": "3 inf 1 tank 1 ftr", "defender": "3 inf 1 aa",
     "keep_land": 1, "aa_last": True},
    {"rules": "revised", "attacker": "3 inf 1 art", "defender": "3 inf", "method": "auto"},
    {"rules": "1942-2e", "attacker": {"infantry": 2, "tank": 2}, "defender": {"inf": 3}},
    # solved on their own, as simulate solves them
    {"rules": "1942-2e", "attacker": "3 inf 1 art", "defender": "3 inf", "method": "mc",
     "trials": 20_000, "seed": 5},
    {"rules": "revised", "attacker": "3 inf 1 art", "defender": "3 inf", "method": "auto",
     "trials": 10, "seed": 3},
    {"rules": "1942-2e", "attacker": "5 inf 2 tank", "defender": "6 inf",
     "retreat_below": 0.3},
    {"rules": "1942-2e", "attacker": "4 inf 1 art", "defender": "4 inf",
     "rounds_distribution": True},
    {"rules": "formula", "attacker": "3 army", "defender": "2 army", "method": "exact"},
    {"rules": "1942-2e", "attacker": "60 inf 20 art 20 tank 5 ftr",
     "defender": "80 inf 10 tank 1 aa"},  # (estimated above exact.PARALLEL_SECONDS)
]
SOLVE_MANY_BATCHED = 22  # the first ones: solved in a batch


# =============================================================================================
# Path battles: the battles each variant of the exact solver is compared on against the
# general path (tests/solver/test_variants.py; the golden's path cases were drawn from them)

# The land fast path's merged attacker blocks (round-1 AA fire: a block per outcome)
LAND_MERGED = {
    "aircraft only": dict(rules="1942-2e", attacker="25 ftr", defender="7 tank 10 art 2 aa"),
    "one land unit first": dict(rules="1942-2e", attacker="7 ftr 9 bmb 1 art",
                                defender="7 art 21 bmb 5 inf 1 ftr 3 aa"),
    "land units first": dict(rules="1942-2e", attacker="6 tank 2 bmb 3 art 3 ftr",
                             defender="20 tank 3 aa"),
    "revised, each die its aircraft": dict(rules="revised", attacker="5 ftr 4 bmb 2 inf",
                                           defender="6 inf 2 tank 1 aa"),
    "rounds law": dict(rules="1942-2e", attacker="8 ftr 3 bmb", defender="9 inf 2 art 2 aa",
                       rounds_distribution=True),
    "low luck": dict(rules="1942-2e", attacker="9 ftr 2 tank", defender="8 inf 3 tank 3 aa",
                     dice="low_luck"),
    "keep land, weakest": dict(rules="1940-2e", attacker="3 inf 6 ftr 2 bmb",
                               defender="7 inf 2 art 1 aa", keep_land=1,
                               attacker_ool="weakest"),
    "retreat after 2": dict(rules="1942-2e", attacker="2 tank 7 ftr 2 bmb",
                            defender="8 inf 2 tank 2 aa", retreat_after=2),
    "retreat below 40%": dict(rules="1942-2e", attacker="10 ftr 1 bmb",
                              defender="9 inf 3 art 2 aa", retreat_below=0.4),
    "strafe, only air": dict(rules="revised", attacker="2 inf 5 ftr 3 bmb",
                             defender="8 inf 1 tank 1 aa", strafe=2,
                             retreat_when_only_air=True),
}

# The land fast path's row sweep (a row of state pairs at a time)
LAND_SWEPT = {
    **LAND_MERGED,
    "no AA": dict(rules="1942-2e", attacker="12 inf 4 art 5 tank 3 ftr 2 bmb",
                  defender="16 inf 3 art 2 tank 2 ftr"),
    "land first, retreat after 2": dict(rules="1942-2e", attacker="8 inf 3 tank 4 ftr",
                                        defender="10 inf 2 art 1 aa", retreat_after=2),
    "retreat when 3 left": dict(rules="revised", attacker="9 inf 4 tank 2 ftr",
                                defender="11 inf 2 tank", retreat_when_left=3),
    "classic, defender wiped at once": dict(rules="classic", attacker="14 ftr 6 bmb",
                                            defender="2 inf 1 aa"),
}

# The general (sea) round's two phases: subs strike, then general fire
SEA_TWO_PHASE = {
    "sea 19": dict(rules="1942-2e", sea=True, attacker="4 battleship, 8 cruiser, 3 bomber",
                   defender="8 cruiser, 6 submarine, 2 destroyer"),
    "sea 46": dict(rules="1942-2e", sea=True,
                   attacker="2 battleship, 4 cruiser, 5 submarine, 1 carrier",
                   defender="7 submarine"),
    "subs v air": dict(rules="1942-2e", sea=True, attacker="8 submarine, 1 destroyer",
                       defender="5 fighter, 6 carrier, 2 submarine"),
    "revised, fire back": dict(rules="revised", sea=True,
                               attacker="4 submarine, 2 destroyer, 2 battleship",
                               defender="5 submarine, 1 destroyer, 2 transport"),
    "lone transports": dict(rules="1942-2e", sea=True, attacker="2 cruiser, 4 transport",
                            defender="4 submarine, 1 cruiser"),
}

SEA_EDITIONS = ("1942-2e", "revised", "classic", "aa50", "1940-2e")
SEA_UNITS = ("battleship", "cruiser", "destroyer", "submarine", "carrier", "fighter", "bomber",
             "transport")


def sea_units(edition: str) -> list[str]:
    """The units of SEA_UNITS that the edition has, in that order (what random sea armies are
    drawn from)."""
    from battlecalc import load_rules

    units = load_rules(edition).units
    return [unit for unit in SEA_UNITS if unit in units]


def random_army(rng, units: list[str], size: int, subs: int = 0) -> str:
    """Army notation of `size` units drawn from `units` (and `subs` submarines first)."""
    counts = {"submarine": subs} if subs else {}
    for _ in range(size):
        unit = rng.choice(units)
        counts[unit] = counts.get(unit, 0) + 1
    return ", ".join(f"{n} {unit}" for unit, n in counts.items())


@functools.cache
def sea_two_phase_random() -> tuple[dict, ...]:
    """60 random sea battles of five editions, subs on one side or both (the strikes the two
    phases are for), destroyers, transports, submerging, retreats, low luck."""
    import random

    from battlecalc import load_rules

    rng = random.Random(2026)
    battles = []
    for i in range(60):
        edition = SEA_EDITIONS[i % len(SEA_EDITIONS)]
        units = sea_units(edition)
        where = i % 3  # 0: attacker's subs, 1: defender's, 2: both
        battle = dict(rules=edition, sea=True,
                      attacker=random_army(rng, units, rng.randint(1, 6),
                                           rng.randint(1, 5) if where != 1 else 0),
                      defender=random_army(rng, units, rng.randint(1, 6),
                                           rng.randint(1, 5) if where != 0 else 0))
        extra = rng.randrange(6)
        submerge = load_rules(edition).flags["submerge_timing"] != "never"
        if extra == 1 and submerge:
            battle["attacker_submerge"] = "first-chance"
        elif extra == 2 and submerge:
            battle["defender_submerge"] = "when-only-subs-left"
        elif extra == 3:
            battle["retreat_after"] = rng.randint(1, 3)
        elif extra == 4:
            battle["retreat_when_left"] = rng.randint(1, 3)
        elif extra == 5 and edition != "classic":
            battle["dice"] = "low_luck"
        battles.append(battle)
    return tuple(battles)


WALK_EDITIONS = ("1940-2e", "1942-2e", "revised", "classic", "aa50")
# options a random sea-walk battle may carry (one each, or none)
WALK_OPTIONS = ({}, {}, {"dice": "low_luck"}, {"retreat_after": 2}, {"retreat_below": 0.4},
                {"rounds_distribution": True}, {"retreat_when_left": 2},
                {"attacker_ool": "weakest"})


@functools.cache
def sea_walk_random() -> tuple[dict, ...]:
    """12 random sea battles without submarines of each of five editions (the walk path):
    1-3 unit types a side of its ships and aircraft, 1-5 of each, some with an option of
    WALK_OPTIONS."""
    import numpy as np

    from battlecalc import load_rules

    battles = []
    for i, edition in enumerate(WALK_EDITIONS):
        units = load_rules(edition).units
        names = sorted(n for n, u in units.items()
                       if u.domain in ("sea", "air") and not u.submarine)
        rng = np.random.default_rng(2026 + i)
        found = []
        while len(found) < 12:
            sides = []
            for _ in range(2):
                picked = rng.choice(names, size=rng.integers(1, 4), replace=False)
                sides.append({str(n): int(rng.integers(1, 6)) for n in picked})
            attacker, defender = sides
            if all(units[n].attack == 0 for n in attacker):
                continue  # (an attack that cannot fire: nothing to play)
            options = WALK_OPTIONS[int(rng.integers(len(WALK_OPTIONS)))]
            found.append(dict(rules=edition, attacker=attacker, defender=defender, sea=True,
                              method="exact", **options))
        battles += found
    return tuple(battles)


COMPACT_OPTIONS = ({}, {}, {"rounds_distribution": True}, {"attacker_submerge": "first-chance"},
                   {"defender_submerge": "when-only-subs-left"}, {"dice": "low_luck"},
                   {"retreat_after": 2}, {"retreat_when_left": 3})


@functools.cache
def compact_random() -> tuple[dict, ...]:
    """8 random sea battles of each of five editions with submarines and aircraft on both
    sides (and 0-3 more of its ship types, 1-5 of each), some with an option of
    COMPACT_OPTIONS: what a compact mass table is compared with a dense one on."""
    import numpy as np

    from battlecalc import load_rules

    battles = []
    for i, edition in enumerate(WALK_EDITIONS):
        ruleset = load_rules(edition)
        units = ruleset.units
        never = ruleset.flags["submerge_timing"] == "never"
        subs = sorted(n for n, u in units.items() if u.domain == "sea" and u.submarine)
        air = sorted(n for n, u in units.items() if u.domain == "air")
        ships = sorted(n for n, u in units.items() if u.domain == "sea" and not u.submarine)
        rng = np.random.default_rng(1201 + i)
        for _ in range(8):
            sides = []
            for _ in range(2):
                picked = [rng.choice(subs), rng.choice(air),
                          *rng.choice(ships, size=rng.integers(0, 4), replace=False)]
                sides.append({str(n): int(rng.integers(1, 6)) for n in picked})
            options = COMPACT_OPTIONS[int(rng.integers(len(COMPACT_OPTIONS)))]
            if never and any("submerge" in key for key in options):
                options = {}  # (its subs never submerge)
            battles.append(dict(rules=edition, attacker=sides[0], defender=sides[1], sea=True,
                                method="exact", **options))
    return tuple(battles)


# 150 v 150 units of subs and aircraft on both sides: about 100,000 states a side, 1e10 state
# pairs, solved in a compact table (slow)
COMPACT_BIG = dict(rules="1942-2e", sea=True,
                   attacker="20 sub, 25 dd, 25 ca, 20 bb, 10 cv, 35 ftr, 15 bmb",
                   defender="20 sub, 30 dd, 25 ca, 25 bb, 15 cv, 35 ftr")
# a small battle of the compact table's kind (general round, one block)
COMPACT_SMALL = dict(rules="1942-2e", sea=True, attacker="6 sub 4 ftr 2 dd",
                     defender="5 sub 3 ftr 2 cv 1 dd")

# Pruning within a budget, on battles small enough to solve unpruned too
PRUNE_SMALL = {
    "land, AA blocks": dict(rules="1942-2e", attacker="12 inf 4 art 4 tank 3 ftr 2 bmb",
                            defender="16 inf 3 art 2 tank 2 ftr 2 aa"),
    "land, revised": dict(rules="revised", attacker="14 inf 5 art 5 tank",
                          defender="18 inf 3 tank 1 ftr"),
    "land, amphibious retreat": dict(rules="1942-2e", attacker="3 inf 2 tank 2 ftr",
                                     landing="4 inf 2 art", bombard="1 bb",
                                     defender="7 inf 1 tank 1 aa", retreat_after=2),
    # the closed sweep's two-phase rounds: a pair under the threshold is dropped with the
    # mass that the strikes of earlier pairs left it for general fire
    "sea, subs strike": dict(rules="1942-2e", attacker="8 sub 2 carrier",
                             defender="6 transport 3 cruiser 2 carrier 2 fighter", sea=True),
    "sea, subs strike both ways": dict(rules="1942-2e", attacker="6 sub 2 destroyer 3 bomber",
                                       defender="4 sub 3 cruiser 2 carrier 2 fighter",
                                       sea=True),
}
# 300 v 300 land units: pruned within the budget, solved exactly by auto (slow)
PRUNE_BIG_LAND = dict(rules="1942-2e", attacker="150 inf, 50 art, 60 tank, 25 ftr, 15 bmb",
                      defender="180 inf, 50 art, 40 tank, 25 ftr, 5 aa")


# --- freezing the answers --------------------------------------------------------------------

def _frame(frame) -> dict | None:
    if frame is None:
        return None
    return {"columns": [str(c) for c in frame.columns],
            "rows": [list(row) for row in frame.itertuples(index=False, name=None)]}


def _plain(value):
    """numpy scalars to Python ones (json writes floats with repr: exact round trip)."""
    if hasattr(value, "item"):
        return value.item()
    return value


def freeze(result) -> dict:
    """The exact Result's numbers as plain JSON data."""
    data = {key: _plain(getattr(result, key)) for key in SCALARS}
    for key in SURVIVORS:
        data[key] = {unit: float(v) for unit, v in getattr(result, key).items()}
    for key in DISTRIBUTIONS:
        frame = _frame(getattr(result, key))
        if frame is not None:
            frame["rows"] = [[_plain(v) for v in row] for row in frame["rows"]]
        data[key] = frame
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true",
                        help=f"solve every battle exactly and write {FIXTURE}")
    args = parser.parse_args(argv)
    # run from the repository: import the package of this checkout, not an installed one
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import battlecalc

    if not args.write:
        print(f"{len(BATTERY)} battles; --write solves them and writes {FIXTURE}")
        return 0
    entries = []
    started = time.perf_counter()
    slowest = []
    for battle in BATTERY:
        t0 = time.perf_counter()
        result = battlecalc.simulate(**kwargs_of(battle), method="exact")
        slowest.append((time.perf_counter() - t0, battle["id"]))
        entries.append({"id": battle["id"], "kwargs": kwargs_of(battle),
                        "result": freeze(result)})
    fixture = {"format": FORMAT, "package": battlecalc.__name__,
               "note": "exact answers of the landed engine; see tests/battles.py",
               "battles": entries}
    os.makedirs(os.path.dirname(FIXTURE), exist_ok=True)
    tmp = FIXTURE + ".tmp"
    # one battle per line: readable diffs, a few MB
    head = json.dumps({k: v for k, v in fixture.items() if k != "battles"})[:-1]
    with open(tmp, "w") as handle:
        handle.write(head + ', "battles": [\n')
        handle.write(",\n".join(json.dumps(e, separators=(",", ":")) for e in entries))
        handle.write("\n]}\n")
    os.replace(tmp, FIXTURE)
    slowest.sort(reverse=True)
    print(f"{len(entries)} battles in {time.perf_counter() - started:.1f} s; "
          f"{os.path.getsize(FIXTURE) / 1e6:.2f} MB written to {FIXTURE}")
    for seconds, ident in slowest[:5]:
        print(f"  {seconds:.3f} s  {ident}")
    return 0


if __name__ == "__main__":
    sys.exit(main())


# The compiled side-table builder's battles (tests/kernels/test_builder.py, and the batch's
# decision in tests/solver/test_batch_decision.py): every kind of side the builder takes
DICE_EDITIONS = ("revised", "1942-2e", "1940-2e", "aa50", "classic")

BUILDER_FIXED = [
    dict(rules="1942-2e", attacker="3 inf 1 art", defender="3 inf"),
    dict(rules="1942-2e", attacker="10 sub", defender="6 ftr 2 bmb 2 dd", sea=True),
    dict(rules="1942-2e", attacker="9 bmb 8 inf 2 art 4 ftr", defender="3 aa 11 ftr"),
    dict(rules="1942-2e", attacker="3 inf 2 art 2 tank 2 ftr 1 bmb",
         defender="5 inf 1 aa 2 ftr", dice="low_luck"),
    dict(rules="1942-2e", attacker="3 sub 2 dd 1 bb 2 ftr 1 bmb",
         defender="2 sub 1 cv 2 ftr 1 ca", sea=True, attacker_submerge="first-chance",
         defender_submerge="when-only-subs-left"),
    dict(rules="1942-2e", attacker="1 ftr 1 tank", landing="3 inf 1 art", bombard="1 bb 1 ca",
         defender="4 inf 1 ftr 1 aa", retreat_when_left=3),
    dict(rules="revised", attacker="2 ftr", landing="2 inf 1 tank", bombard="2 bb",
         defender="3 inf 1 ftr 1 aa", retreat_after=1),
    dict(rules="aa50", attacker="2 ftr 1 bmb 2 tank", landing="2 inf", bombard="1 ca",
         defender="3 inf 2 ftr", retreat_after=2, dice="low_luck"),
    dict(rules="1940-2e", attacker="3 inf 1 art 1 mech 1 tank 1 tac 1 ftr",
         defender="4 inf 1 aa 1 ftr", attacker_ool="smart", retreat_when_only_air=True),
    dict(rules="classic", attacker="4 ftr 2 bmb 3 inf", defender="3 inf 2 aa 1 ftr",
         defender_ool="fighter,infantry", keep_land=1),
    dict(rules="1942-2e", attacker="6 ftr 3 bmb", defender="4 inf 3 aa 2 ftr", aa_last=True,
         attacker_ool="*^fighter;1^bomber"),
    dict(rules="1942-2e", attacker="2 bb 2 cv 2 ftr 1 sub", defender="1 bb 1 sub 2 dd 1 tt",
         sea=True, attacker_tech="super_subs", retreat_after=2),
    dict(rules="1942-2e", attacker="30 inf 10 art 6 tank 4 ftr", defender="36 inf 2 art 2 aa"),
    dict(rules="revised", attacker="10 sub 8 dd 6 bb 6 ftr", defender="12 sub 6 dd 4 cv 8 ftr",
         sea=True, defender_submerge="first-chance"),
    # battles that start where they stand (casualties chosen: lost first)
    dict(rules="1942-2e", attacker="3 inf 1 tank", defender="2 inf", start_round=2),
    dict(rules="1942-2e", attacker="2 bb 1 dd", defender="2 dd 1 sub", sea=True,
         start_step="general_casualties", hits_on_attacker=1, attacker_waiting="1 bb"),
    dict(rules="1942-2e", attacker="3 inf 1 art", defender="2 inf 1 tank",
         start_step="end_of_round", defender_waiting="1 tank", attacker_waiting="1 inf"),
]


def builder_random(seed: int, n: int) -> list[dict]:
    """n random battles of the dice editions (some of them refused by the checks: left out
    by _specs)."""
    from battlecalc.rules import load_rules

    rng = random.Random(seed)
    battles = []
    while len(battles) < n:
        rules = rng.choice(DICE_EDITIONS)
        ruleset = load_rules(rules)
        units = ruleset.units
        sea = rng.random() < 0.4
        domain = ("sea", "air") if sea else ("land", "air")
        pool = [name for name, u in units.items() if u.domain in domain]
        attack_pool = [name for name in pool if units[name].can_attack]

        def army(names, most):
            kinds = rng.sample(names, rng.randint(1, min(4, len(names))))
            return {name: rng.randint(1, most) for name in kinds}

        most = rng.choice([2, 4, 8])
        battle = dict(rules=rules, attacker=army(attack_pool, most),
                      defender=army(pool, most), sea=sea)
        if rng.random() < 0.3:
            battle["dice"] = "low_luck"
        if rng.random() < 0.3 and ruleset.techs:
            battle["attacker_tech"] = rng.choice(list(ruleset.techs))
        if rng.random() < 0.2 and ruleset.techs:
            battle["defender_tech"] = rng.choice(list(ruleset.techs))
        for side in ("attacker", "defender"):
            roll = rng.random()
            if roll < 0.2:
                battle[f"{side}_ool"] = rng.choice(["weakest", "smart", "cheapest"])
            elif roll < 0.35:
                battle[f"{side}_ool"] = ",".join(rng.sample(pool, rng.randint(1, 2)))
            elif roll < 0.45:
                battle[f"{side}_ool"] = ";".join(
                    f"{rng.choice(['*', '1', '2'])}^{name}"
                    for name in rng.sample(pool, rng.randint(1, 3)))
        if sea and rng.random() < 0.4:
            battle["attacker_submerge"] = rng.choice(["when-only-subs-left", "first-chance"])
            battle["defender_submerge"] = rng.choice(["never", "first-chance"])
        if not sea:
            if rng.random() < 0.3:
                aa = [name for name, u in units.items() if u.is_aa]
                if aa:
                    battle["defender"][aa[0]] = rng.randint(1, 3)
            if rng.random() < 0.15:
                battle["keep_land"] = 1
            if rng.random() < 0.15:
                battle["aa_last"] = True
            if rng.random() < 0.15:
                land = [n for n, u in units.items() if u.is_land and u.can_attack]
                ships = [n for n, u in units.items() if u.bombard]
                battle["landing"] = {rng.choice(land): rng.randint(1, 3)}
                if ships and rng.random() < 0.7:
                    battle["bombard"] = {rng.choice(ships): rng.randint(1, 2)}
        roll = rng.random()
        if roll < 0.15:
            battle["retreat_after"] = rng.randint(1, 3)
        elif roll < 0.25:
            battle["retreat_when_left"] = rng.randint(1, 4)
        battles.append(battle)
    return battles


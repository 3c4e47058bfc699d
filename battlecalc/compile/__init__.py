"""Compile a validated battle into the flat tables the exact solver and the Monte Carlo kernel
share (kernels/layout.py documents their columns).

* compile.battle: the battle's facts: fire before round 1 (round-1 AA outcomes, bombardment),
  the round rules, the retreat policy as kernel arrays, a battle from where it stands
  (battlecalc.starts), and compile_battle, which puts them together (a run of battles of one
  form with a SideCache);
* compile.sides: a side's tables (its casualty walks, hit laws, states, survivors, IPC lost)
  and their builders;
* compile.cache: TABLES, every table kept from one battle for the next (one clear(), one byte
  budget).
"""

from __future__ import annotations

from .battle import (
    NO_BOMBARDMENT,
    OPTIMAL_MASK,
    Bombardment,
    CompiledBattle,
    SideCache,
    aa_blocks,
    bombardment,
    compile_battle,
    retreat_vector,
    round_rules,
    with_retreat,
)
from .cache import TABLES, TableCache
from .sides import MAX_STATES, MAX_TABLE_CELLS, Side, build_side, flat_state, forget_tables

__all__ = ["MAX_STATES", "MAX_TABLE_CELLS", "NO_BOMBARDMENT", "OPTIMAL_MASK", "TABLES",
           "Bombardment", "CompiledBattle", "Side", "SideCache", "TableCache", "aa_blocks",
           "bombardment", "build_side", "compile_battle", "flat_state", "forget_tables",
           "retreat_vector", "round_rules", "with_retreat"]

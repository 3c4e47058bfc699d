"""TripleA, the open-source Axis & Allies engine: its saves (``.tsvg``) read into battlecalc.

:func:`read_game` reads a save: the game, the edition it maps to, the round, the step, the
player to move, every territory's units and every pending battle, each solved with the options
of :func:`battlecalc.simulate`.  Reading needs the optional package javaobj-py3
(``pip install 'battlecalc[triplea]'``).
"""

from .game import EDITIONS_BY_GAME, Game, GameBattle, game_options, read_game
from .save import SaveData, read_save

__all__ = ["EDITIONS_BY_GAME", "Game", "GameBattle", "SaveData", "game_options", "read_game",
           "read_save"]

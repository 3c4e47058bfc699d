"""Every answer of the golden (tests/golden.py) equal to the last bit: the engine room's
restructuring changes no answer by accident."""

from __future__ import annotations

import json

import golden
import pytest

from battlecalc.kernels import jit

with open(golden.FIXTURE) as _f:
    CASES = json.load(_f)["cases"]


@pytest.fixture(scope="module", autouse=True)
def _compiled():
    jit.compiled()  # (recorded with compiled kernels)


@pytest.mark.filterwarnings("ignore::battlecalc.errors.BattleInputWarning")
@pytest.mark.parametrize("case", CASES, ids=[f"{c['id']}-{c['group']}-{c['variant']}"
                                             for c in CASES])
def test_answer_is_bit_identical(case):
    assert golden.digest(golden.solve_case(case)) == case["digest"], case["headline"]

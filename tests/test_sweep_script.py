"""battlecalc.sweep() in an ordinary script, without ``if __name__ == "__main__":`` (issue 16,
point 18): worker processes must not run the script again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from battlecalc import simulate

REPO = Path(__file__).resolve().parent.parent

SCRIPT = """\
import json
import multiprocessing
{start_method}
import battlecalc

print("script body runs", flush=True)
rows = [{{"rules": "revised", "attacker": f"{{n}} inf", "defender": "2 inf", "method": "exact"}}
        for n in range(1, 5)]
table = battlecalc.sweep(rows, workers=2, chunk_size=1, seed=5)
print(json.dumps({{"win": list(table["attacker_win"]), "error": list(table["error"])}}))
"""


@pytest.mark.parametrize("start_method", ["forkserver", "spawn"])
def test_a_script_without_a_main_guard_sweeps_on_two_workers(tmp_path, start_method):
    # spawn is what runs where there is no fork server (macOS, Windows): force it here
    force = "" if start_method == "forkserver" else \
        "multiprocessing.get_all_start_methods = lambda: ['spawn']"
    script = tmp_path / "my_sweep.py"
    script.write_text(SCRIPT.format(start_method=force))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "bootstrapping phase" not in done.stderr
    lines = done.stdout.splitlines()
    assert lines.count("script body runs") == 1  # once, in this process: never in a worker
    out = json.loads(lines[-1])
    assert out["error"] == [None] * 4
    expected = [simulate(rules="revised", attacker=f"{n} inf", defender="2 inf",
                         method="exact").attacker_win for n in range(1, 5)]
    assert out["win"] == pytest.approx(expected, abs=1e-12)

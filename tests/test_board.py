"""The live board without a browser: the watched folder (battlecalc.triplea.watch), the board of
a save (battlecalc.triplea.board) and `battlecalc watch`.

The folder's tests run on a clock of their own (SaveFolder's `clock`), so that "unchanged for
`settle` seconds" costs no waiting."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from helpers import invoke
from hostile_saves import LAND_BATTLE, triplea_fixtures

from battlecalc.errors import BattleInputError
from battlecalc.triplea import board as boards
from battlecalc.triplea.watch import SaveFolder, gzip_state, triplea_autosave_folder

START = triplea_fixtures() / "saves" / "revisted_start_of_game.tsvg"
needs_saves = pytest.mark.skipif(not LAND_BATTLE.exists(),
                                 reason="the shared TripleA saves are absent")


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


@pytest.fixture
def folder(tmp_path):
    clock = Clock()
    watched = tmp_path / "autoSave"
    watched.mkdir()
    saves = SaveFolder(watched, clock=clock)
    yield watched, saves, clock
    saves.close()


def _write(path, data: bytes, mtime_s: float | None = None) -> None:
    path.write_bytes(data)
    if mtime_s is not None:
        os.utime(path, (mtime_s, mtime_s))


# ------------------------------------------------------------------ the folder


@needs_saves
def test_the_newest_complete_save_is_read_once_it_has_settled(folder):
    watched, saves, clock = folder
    raw = LAND_BATTLE.read_bytes()
    _write(watched / "autosave.tsvg", raw, 1_000)
    assert saves.poll() is None  # just seen: it may still be written
    clock.now += 0.2
    assert saves.poll() is None
    clock.now += 0.4  # unchanged for 0.6 s
    found = saves.poll()
    assert found is not None and found.name == "autosave.tsvg" and found.raw == raw
    assert saves.poll() is None  # read once
    # an older save does not replace it; a newer one does, once settled
    _write(watched / "autosave_round_odd.tsvg", START.read_bytes(), 900)
    clock.now += 1
    assert saves.poll() is None and saves.poll() is None
    _write(watched / "autosaveAfterBattle.tsvg", START.read_bytes(), 1_100)
    assert saves.poll() is None
    clock.now += 1
    assert saves.poll().name == "autosaveAfterBattle.tsvg"


@needs_saves
def test_a_save_being_written_is_never_read_half(folder):
    watched, saves, clock = folder
    raw = LAND_BATTLE.read_bytes()
    target = watched / "autosaveBeforeBattle.tsvg"
    # growing: its size changes between looks, it is never read
    for size in range(2_000, len(raw), 5_000):
        _write(target, raw[:size])
        assert saves.poll() is None
        clock.now += 0.3
    assert saves.reads == 0
    # stalled half-way (unchanged for longer than `settle`): its gzip stream is incomplete,
    # it is skipped (noted), and nothing of it is returned
    clock.now += 1
    assert saves.poll() is None
    assert saves.reads == 1 and "gzip stream is incomplete" in saves.notes[-1]
    clock.now += 1
    assert saves.poll() is None and saves.reads == 1  # not read again while unchanged
    # written to the end: read
    _write(target, raw)
    assert saves.poll() is None
    clock.now += 1
    found = saves.poll()
    assert found is not None and found.raw == raw


@needs_saves
def test_a_half_written_newest_save_leaves_the_board_on_the_complete_one(folder):
    watched, saves, clock = folder
    raw = LAND_BATTLE.read_bytes()
    _write(watched / "autosave.tsvg", raw, 1_000)
    saves.poll()
    clock.now += 1
    assert saves.poll().name == "autosave.tsvg"
    _write(watched / "autosaveAfterBattle.tsvg", raw[: len(raw) // 2], 2_000)
    for _ in range(4):
        clock.now += 1
        assert saves.poll() is None


@needs_saves
def test_the_newest_save_left_is_the_board_when_a_newer_one_goes(folder):
    watched, saves, clock = folder
    _write(watched / "autosave_round_odd.tsvg", START.read_bytes(), 1_000)
    _write(watched / "autosaveBeforeBattle.tsvg", LAND_BATTLE.read_bytes(), 2_000)
    saves.poll()
    clock.now += 1
    assert saves.poll().name == "autosaveBeforeBattle.tsvg"
    (watched / "autosaveBeforeBattle.tsvg").unlink()
    clock.now += 1
    assert saves.poll().name == "autosave_round_odd.tsvg"
    assert saves.poll() is None
    assert saves._done == {("autosave_round_odd.tsvg", len(START.read_bytes()),
                            1_000 * 10**9)}  # (nothing kept of files gone)


def test_gzip_state():
    import gzip

    whole = gzip.compress(b"x" * 10_000)
    assert gzip_state(whole) == "complete"
    assert gzip_state(whole[:-4]) == "incomplete"  # its trailer (the size) missing
    assert gzip_state(whole[:10]) == "incomplete"
    assert gzip_state(b"") == gzip_state(b"\x1f") == "incomplete"
    assert gzip_state(b"PK\x03\x04 not gzip") == "damaged"
    assert gzip_state(whole[:-8] + b"\0\0\0\0" + whole[-4:]) == "damaged"  # CRC wrong
    assert gzip_state(gzip.compress(b"\0" * 3_000_000), max_inflated=2_000_000) == "too large"


@needs_saves
def test_a_symlink_out_of_the_folder_is_refused_and_never_opened(folder, tmp_path):
    watched, saves, clock = folder
    outside = tmp_path / "elsewhere.tsvg"
    shutil.copy(LAND_BATTLE, outside)
    (watched / "autosave.tsvg").symlink_to(outside)
    (watched / "inside.tsvg").symlink_to(watched / "autosave.tsvg")  # (to the symlink)
    for _ in range(3):
        assert saves.poll() is None
        clock.now += 1
    assert saves.reads == 0
    assert "autosave.tsvg: refused, a symlink out of the folder" in saves.notes
    # a file that turns into a symlink after it was listed is not followed (O_NOFOLLOW)
    real = watched / "real.tsvg"
    shutil.copy(LAND_BATTLE, real)
    listed = saves._entries()
    real.unlink()
    real.symlink_to(outside)
    saves._entries = lambda: [e for e in listed if e[0] == "real.tsvg"]  # the stale listing
    assert saves.poll() is None
    clock.now += 1
    assert saves.poll() is None and saves.reads == 0


def test_what_is_no_save_is_never_opened(folder):
    watched, saves, clock = folder
    os.mkfifo(watched / "pipe.tsvg")  # opening it for reading would block
    (watched / "folder.tsvg").mkdir()
    _write(watched / "autosave.tsvg123.tmp", b"\x1f\x8b being written by TripleA")
    _write(watched / "notes.txt", b"hello")
    for _ in range(3):
        assert saves.poll() is None
        clock.now += 1
    assert saves.reads == 0 and saves.notes == []


def test_a_save_over_the_size_cap_is_refused_unread(tmp_path):
    clock = Clock()
    saves = SaveFolder(tmp_path, clock=clock, max_bytes=1_000)
    _write(tmp_path / "big.tsvg", b"\x1f\x8b" + b"\0" * 2_000)
    saves.poll()
    clock.now += 1
    assert saves.poll() is None and saves.reads == 0
    assert saves.notes == ["big.tsvg: over 1,000 bytes, not read"]
    saves.close()


def test_a_folder_that_is_not_one_is_one_line(tmp_path):
    with pytest.raises(BattleInputError, match="cannot watch .*: No such file or directory "
                                               r"\(TripleA's autosave folder here: "):
        SaveFolder(tmp_path / "missing")
    (tmp_path / "file.tsvg").write_bytes(b"")
    with pytest.raises(BattleInputError, match="not a folder"):
        SaveFolder(tmp_path / "file.tsvg")


def test_triplea_autosave_folder_is_triplea_s_default(tmp_path):
    # ClientFileSystemHelper.getUserRootFolder: HOME/Documents/triplea if it exists, else
    # HOME/triplea; ClientSetting.saveGamesFolderPath: its savedGames; AutoSaveFileUtils:
    # autoSave in that
    assert triplea_autosave_folder(tmp_path) == tmp_path / "triplea" / "savedGames" / "autoSave"
    (tmp_path / "Documents" / "triplea").mkdir(parents=True)
    assert triplea_autosave_folder(tmp_path) == (tmp_path / "Documents" / "triplea"
                                                 / "savedGames" / "autoSave")
    assert triplea_autosave_folder(save_games=tmp_path / "mine") == tmp_path / "mine" / "autoSave"


# ------------------------------------------------------------------ the board of a save


@needs_saves
def test_a_battle_in_progress_loads_with_its_start_and_solves_as_game_does():
    import urllib.parse

    import battlecalc
    from battlecalc.triplea.game import read_game
    from battlecalc.web.spec import parse_params

    board = boards.read_board(LAND_BATTLE)
    (battle,) = board["battles"]
    assert battle["territory"] == "West Russia" and battle["in_progress"]
    assert battle["start"] == {"start_round": 1, "start_step": "defender_fire",
                               "hits_on_defender": 1}
    query = dict(urllib.parse.parse_qsl(battle["query"]))
    assert query == {"rules": "revised", "attacker": "6 infantry, 1 artillery, 3 tank, 1 fighter",
                     "defender": "3 infantry, 1 artillery, 1 tank", "start_round": "1",
                     "start_step": "defender_fire", "hits_on_defender": "1"}
    # the TUV at stake: 6 inf, 1 art, 3 tanks, 1 fighter (47) and 3 inf, 1 art, 1 tank (18)
    assert (battle["attacker_tuv"], battle["defender_tuv"], battle["tuv_at_risk"]) == (47, 18, 65)
    # the query, read as the web API reads it, is the battle `game` solves
    kwargs, _ = parse_params(boards.solve_params(battle["query"]))
    page = battlecalc.simulate(**kwargs)
    (game,) = read_game(LAND_BATTLE).battles
    for key in ("attacker_win", "defender_win", "draw", "takes_territory", "tuv_swing",
                "attacker_ipc_loss", "defender_ipc_loss", "mean_rounds"):
        assert getattr(page, key) == pytest.approx(game.result[key], abs=1e-9), key
    assert page.attacker_win == pytest.approx(0.998940, abs=1e-6)  # docs/in-progress.md


@needs_saves
def test_any_territory_loads_as_the_defender_of_game_territory_attack():
    import urllib.parse

    import battlecalc
    from battlecalc.triplea.game import read_game
    from battlecalc.web.spec import parse_params

    board = boards.read_board(START)
    assert board["battles"] == []
    places = {t["name"]: t for t in board["territories"]}
    assert len(places) == 143
    germany = places["Germany"]
    assert germany["units"] == "3 infantry, 2 tank, 1 aa, 1 fighter, 1 bomber"
    assert "kind" not in dict(urllib.parse.parse_qsl(germany["query"]))
    sea = next(t for t in board["territories"] if t["water"] and t["units"])
    assert dict(urllib.parse.parse_qsl(sea["query"]))["kind"] == "sea"
    for place, attack in (("Germany", "8 infantry, 3 tank, 2 fighter, 1 bomber"),
                          (sea["name"], "2 fighter, 1 bomber")):
        kwargs, _ = parse_params(boards.solve_params(places[place]["query"], attacker=attack))
        page = battlecalc.simulate(**kwargs)
        (cli,) = read_game(START, territory=place, attack=attack).battles
        assert page.attacker_win == pytest.approx(cli.result["attacker_win"], abs=1e-9)
        assert page.tuv_swing == pytest.approx(cli.result["tuv_swing"], abs=1e-9)


@needs_saves
def test_the_luck_so_far_is_battlecalc_luck_s():
    from battlecalc.triplea.luck import read_luck

    history = boards.read_board(LAND_BATTLE)["luck"]
    judged = boards.judge_luck(history, lambda kwargs: pytest.fail("no battle to judge"))
    expected = read_luck(LAND_BATTLE).to_dict()
    for key, value in expected.items():
        assert judged[key] == value, key
    assert judged["dice_by_nation"]["Russians"]["dice"] == 11
    assert judged["dice_by_nation"]["Russians"]["hits"] == 1


def test_a_fought_battle_is_judged_from_its_exact_law():
    import battlecalc
    from battlecalc.triplea.luck import FoughtBattle, battle_luck

    history = {"game": "g", "edition": "revised", "dice": {}, "dice_by_nation": {},
               "other_rolls": {}, "pending": [],
               "fought": [{"territory": "Ukraine", "round": 1, "attacker_nations": ["Russians"],
                           "defender_nations": ["Germans"], "attacker": {"infantry": 3},
                           "defender": {"infantry": 2}, "sea": False,
                           "attacker_lost_tuv": 3, "defender_lost_tuv": 6}]}
    luck = boards.judge_luck(history, lambda kwargs: battlecalc.simulate(**kwargs))
    result = battlecalc.simulate(rules="revised", attacker="3 inf", defender="2 inf",
                                 method="exact")
    fought = FoughtBattle("Ukraine", 1, ["Russians"], ["Germans"], {"infantry": 3},
                          {"infantry": 2}, 3, 6)
    assert luck["battles"] == [battle_luck(fought, result.swing_law, result.tuv_swing)]
    assert luck["totals"] == {"Russians": luck["battles"][0]["luck"],
                              "Germans": -luck["battles"][0]["luck"]}

    def refuse(kwargs):
        raise BattleInputError("too large to solve exactly on this server")

    luck = boards.judge_luck(history, refuse)
    assert luck["battles"] == [] and luck["pending"][0]["reason"].startswith("too large")


def _battle(territory, stake, swing=None, nations=("Germans",), **fields):
    odds = None if swing is None else {"tuv_swing": swing, "attacker_win": 0.5}
    return {"territory": territory, "tuv_at_risk": stake, "odds": odds, "kind": "land",
            "attacker_nations": list(nations), "defender_nations": ["Russians"],
            "attacker": "1 infantry", "defender": "1 infantry", "landing": "", "bombard": "",
            "stands": None, **fields}


def test_the_board_is_sorted_by_stake_and_summed_in_one_line():
    battles = [_battle("Karelia", 20, 1.5), _battle("Ukraine", 45, -2.25),
               _battle("Baltic Sea Zone", 45, 4.0), _battle("Finland", 5)]
    assert [b["territory"] for b in boards.by_stake(battles)] == [
        "Baltic Sea Zone", "Ukraine", "Karelia", "Finland"]
    board = {"round": 3, "player": "Germans", "battles": battles}
    assert boards.turn_summary(board) == (
        "Round 3, Germans to move: 4 battles, 115 TUV at risk; expected swing +3.25 TUV for "
        "Germans (3 of 4 battles solved)")
    assert boards.turn_summary({"round": 1, "player": None, "battles": []}) == \
        "Round 1: no battle pending"


def test_what_changed_since_the_last_save():
    before = {"file": "autosaveBeforeBattle.tsvg", "round": 2, "step": "germanBattle",
              "player": "Germans",
              "battles": [_battle("Karelia", 20, 1.5), _battle("Ukraine", 45, -2.25),
                          _battle("Egypt", 30, 0.5)]}
    before["battles"][1]["odds"]["attacker_win"] = 0.62
    now = {"battles": [_battle("Karelia", 20, 1.5), _battle("Ukraine", 40, -2.0,
                                                            attacker="2 infantry"),
                       _battle("Norway", 8, 0.1)]}
    now["battles"][1]["odds"]["attacker_win"] = 0.7
    now["battles"][1]["stands"] = "round 2"
    changes = boards.changes(before, now)
    assert changes == {"since": {"file": "autosaveBeforeBattle.tsvg", "round": 2,
                                 "step": "germanBattle", "player": "Germans"},
                       "gone": ["Egypt"]}
    karelia, ukraine, norway = now["battles"]
    assert (karelia["change"], karelia["changed"]) == (None, [])
    assert ukraine["change"] == "changed" and ukraine["changed"] == [
        "attacker: 1 infantry \u2192 2 infantry", "now round 2",
        "attacker wins 62.00% \u2192 70.00%"]
    assert norway["change"] == "new"
    first = {"battles": [_battle("Karelia", 20)]}
    assert boards.changes(None, first) == {"since": None, "gone": []}
    assert first["battles"][0]["change"] is None


# ------------------------------------------------------------------ battlecalc watch


@needs_saves
@pytest.mark.slow(reason="two saves read and the board solved twice: 0.7 s of CPU, past the "
                        "quick tier's aim of 0.5 s (the live board's `watch --once` example in "
                        "docs/live-board.md and the choice of the save's tests here are quick)")
def test_watch_once_prints_the_board_of_the_newest_complete_save(tmp_path):
    shutil.copy(START, tmp_path / "autosave_round_odd.tsvg")
    os.utime(tmp_path / "autosave_round_odd.tsvg", (1_000, 1_000))
    shutil.copy(LAND_BATTLE, tmp_path / "autosaveBeforeBattle.tsvg")
    raw = LAND_BATTLE.read_bytes()
    (tmp_path / "autosaveAfterBattle.tsvg").write_bytes(raw[:len(raw) // 2])  # being written
    os.utime(tmp_path / "autosaveAfterBattle.tsvg", (4e9, 4e9))
    result = invoke("watch", str(tmp_path), "--once", "--interval", "0.1")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == ("World War II Revised (edition revised), round 1, step russianBattle, "
                        "Russians to move  [autosaveBeforeBattle.tsvg]")
    assert lines[1] == ("Round 1, Russians to move: 1 battle, 65 TUV at risk; expected swing "
                        "+6.36 TUV for Russians")
    assert "West Russia: land battle, Russians attack Germans, 65 TUV at risk" in lines
    assert ("  attacker wins 99.89%  defender wins 0.08%  takes territory 99.77%  expected "
            "swing +6.36 TUV  (exact)") in lines
    assert "  Russians: 11 dice, 1 hit, expected 3.50, z -1.71" in lines
    assert "Note: autosaveAfterBattle.tsvg: skipped, its gzip stream is incomplete " \
           "(being written?)" in result.stderr
    result = invoke("watch", str(tmp_path), "--once", "--interval", "0.1", "--format", "json")
    board = json.loads(result.stdout)
    (battle,) = board["battles"]
    assert battle["odds"]["attacker_win"] == pytest.approx(0.998940, abs=1e-6)
    assert board["by_stake"] == ["West Russia"] and board["file"] == "autosaveBeforeBattle.tsvg"


def test_watch_refuses_what_it_cannot_watch_in_one_line(tmp_path):
    for args, words in ([str(tmp_path / "missing")], "No such file or directory"), \
            ([str(tmp_path), "--once", "--interval", "0.05"], "no complete TripleA save"):
        result = invoke("watch", *args)
        assert result.exit_code == 2, result.output
        (line,) = result.stderr.splitlines()
        assert line.startswith("Error: ") and words in line


@needs_saves
@pytest.mark.parametrize(("save", "place", "attacker", "defender", "nation"), [
    (LAND_BATTLE, "Germany", {"bomber": 2}, {"aa": 1}, "Germans"),
    pytest.param(triplea_fixtures() / "saves" / "wwii_global_2nd_edition_during_g1_politics.tsvg",
                 "Germany", {"bomber": 2, "fighter": 1}, {"fighter": 1}, "Germans",
                 marks=pytest.mark.slow(reason="reads the Global 1940 save: about a second")),
])
def test_a_bombing_raid_on_the_board_solves_as_game_does(save, place, attacker, defender,
                                                         nation):
    import copy

    from battlecalc.raids import raid
    from battlecalc.rules import load_rules
    from battlecalc.triplea import game as games
    from battlecalc.triplea.save import read_save
    from battlecalc.web.spec import parse_params, raid_parameters

    data = read_save(save)
    ruleset = load_rules(games.edition_of(data))
    site = next(t for t in data.territories if t.name == place)
    battle = games.GameBattle(place, "raid", ["Americans"], [nation], attacker, defender,
                              {}, {}, [], [], site=site)
    entry = boards.battle_entry(copy.copy(battle), data, ruleset, False)
    assert entry["query"] and entry["error"] is None
    games._solve(battle, data, ruleset, False, {})
    kwargs, _ = parse_params(boards.solve_params(entry["query"]), raid_parameters())
    page = raid(**kwargs).to_dict()
    for key in ("expected_damage", "attacker_ipc_loss", "defender_ipc_loss", "tuv_swing"):
        assert page[key] == pytest.approx(battle.result[key], abs=1e-9), key
    assert page["expected_damage"] > 0


# ------------------------------------------------------------------ issue 42 items 7, 11, 12
# A folder that can be stat'ed but not listed, a watched folder removed and made again, a save
# that cannot be read.  Permissions are the system's: a user's chmod, or (the tests run as root
# here, which reads anything) a child process under setpriv without root's capabilities, where
# the same chmod bites.  The in-process tests that need a refusal as root take the system's
# answer from os.open (monkeypatched to refuse what a user could not open).


def _unprivileged() -> list[str] | None:
    """The prefix of a command line run without the power to read what its mode forbids:
    none for a user; setpriv dropping every capability for root (None: not available)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    return None if setpriv is None else [setpriv, "--bounding-set=-all", "--inh-caps=-all"]


def _cli_as_a_user(*args: str, timeout: float = 60):
    import subprocess
    import sys

    prefix = _unprivileged()
    if prefix is None:
        pytest.skip("running as root without setpriv: no folder is unreadable here")
    return subprocess.run([*prefix, sys.executable, "-m", "battlecalc", *args],
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL,
                          cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _refuse_to_open(monkeypatch, name: str) -> None:
    """os.open refuses `name` as the system refuses a user a file of mode 000 (where the
    tests run as a user, the chmod itself does)."""
    if os.geteuid() != 0:
        return
    real_open = os.open

    def guarded(path, flags, *args, **kwargs):
        if os.path.basename(os.fspath(path)) == name:
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", guarded)


@pytest.mark.slow  # (the commands run as a user, in child processes)
def test_a_folder_that_cannot_be_listed_is_one_line(tmp_path):
    """Before: SaveFolder opened the folder for its descriptor unguarded: PermissionError's
    traceback from watch and serve --watch."""
    folder = tmp_path / "autoSave"
    folder.mkdir()
    folder.chmod(0o311)  # stat'ed and entered, never listed
    try:
        for args in (["watch", str(folder), "--once"],
                     ["serve", "--watch", str(folder), "--port", "1"]):
            done = _cli_as_a_user(*args)
            assert done.returncode == 2, done.stderr[-2000:]
            assert done.stdout == ""
            assert done.stderr.splitlines() == [
                f"Error: cannot watch {folder}: Permission denied (the folder cannot be "
                "listed)"], done.stderr[-2000:]
    finally:
        folder.chmod(0o755)


@needs_saves
def test_a_folder_removed_and_made_again_is_watched_again(folder):
    """Before: the folder's descriptor kept the removed folder, whose listing is empty: the
    new folder's saves were never looked at, and nothing said so."""
    watched, saves, clock = folder
    _write(watched / "autosave.tsvg", START.read_bytes(), 1_000)
    saves.poll()
    clock.now += 1
    assert saves.poll().name == "autosave.tsvg"
    shutil.rmtree(watched)
    with pytest.raises(FileNotFoundError):  # gone: the caller says so and looks again
        saves.poll()
    watched.mkdir()
    _write(watched / "autosave.tsvg", LAND_BATTLE.read_bytes(), 2_000)
    assert saves.poll() is None  # (just seen)
    clock.now += 1
    found = saves.poll()
    assert found is not None and found.raw == LAND_BATTLE.read_bytes()
    assert saves.notes[-1] == (f"{saves.shown} was removed and made again (or replaced): "
                               "watching the folder there now")
    # the same save again, in a folder made again a second time: read again
    shutil.rmtree(watched)
    watched.mkdir()
    _write(watched / "autosave.tsvg", LAND_BATTLE.read_bytes(), 2_000)
    saves.poll()
    clock.now += 1
    assert saves.poll() is not None


@needs_saves
def test_a_save_that_cannot_be_read_is_noted_and_an_older_one_read(folder, monkeypatch):
    """Before: os.open's PermissionError was taken for a file gone meanwhile: skipped without
    a word (and the older save read in its place, as if it were the newest)."""
    watched, saves, clock = folder
    _write(watched / "autosave_round_odd.tsvg", START.read_bytes(), 1_000)
    _write(watched / "autosaveBeforeBattle.tsvg", LAND_BATTLE.read_bytes(), 2_000)
    (watched / "autosaveBeforeBattle.tsvg").chmod(0o000)
    _refuse_to_open(monkeypatch, "autosaveBeforeBattle.tsvg")
    saves.poll()
    clock.now += 1
    assert saves.poll().name == "autosave_round_odd.tsvg"
    assert saves.notes == ["autosaveBeforeBattle.tsvg: cannot be read (Permission denied), "
                           "skipped"]
    clock.now += 1
    assert saves.poll() is None and saves.said == 1  # said once
    # readable again (a chmod changes neither its size nor its time): read
    (watched / "autosaveBeforeBattle.tsvg").chmod(0o644)
    monkeypatch.undo()
    clock.now += 1
    assert saves.poll().name == "autosaveBeforeBattle.tsvg"


@needs_saves
@pytest.mark.slow  # (watch runs as a user, in a child process)
def test_watch_says_which_save_it_cannot_read(tmp_path):
    shutil.copy(START, tmp_path / "autosave_round_odd.tsvg")
    os.utime(tmp_path / "autosave_round_odd.tsvg", (1_000, 1_000))
    shutil.copy(LAND_BATTLE, tmp_path / "autosaveBeforeBattle.tsvg")
    os.utime(tmp_path / "autosaveBeforeBattle.tsvg", (2_000, 2_000))
    (tmp_path / "autosaveBeforeBattle.tsvg").chmod(0o000)
    done = _cli_as_a_user("watch", str(tmp_path), "--once", "--interval", "0.1")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stderr.splitlines() == [
        "Note: autosaveBeforeBattle.tsvg: cannot be read (Permission denied), skipped"]
    assert done.stdout.splitlines()[0].endswith("[autosave_round_odd.tsvg]")


def test_notes_past_the_kept_ones_are_still_said(folder):
    """The folder keeps its last MAX_NOTES notes; watch printed those after the count it had
    seen (len(notes)), which stops growing at MAX_NOTES: later notes went unsaid."""
    from battlecalc.triplea.watch import MAX_NOTES

    watched, saves, clock = folder
    for i in range(MAX_NOTES + 5):
        _write(watched / f"broken{i:03d}.tsvg", b"not gzip", 1_000 + i)
    saves.poll()
    clock.now += 1
    saves.poll()
    assert saves.said == MAX_NOTES + 5 and len(saves.notes) == MAX_NOTES
    assert saves.notes_since(MAX_NOTES + 3) == saves.notes[-2:]
    _write(watched / "broken999.tsvg", b"not gzip", 5_000)
    said = saves.said
    saves.poll()
    clock.now += 1
    saves.poll()
    assert saves.notes_since(said) == ["broken999.tsvg: not read, its gzip data is damaged"]

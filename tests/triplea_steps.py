"""Saves standing at each step of a battle in progress, made from the shared real saves by
adding a battle to their object stream as TripleA writes it (tests/java_stream.Writer): the
battle classes, the steps on its execution stack (TripleA's inner and anonymous classes, with
the fields Java gives them: an anonymous class inside the inner class FireAa holds its
FireAa as ``this$1`` and the loop's local as ``val$currentTypeAa``), their dice and casualties.
The class names, fields and serial numbers are those of TripleA 2.0 (its source at the tag
2.0.20123, and a real raid save of triplea-game/assets, revised_during_bombing_raid_after_aa_
roll.tsvg, whose FireAa$3 is built here as it is there)."""

from __future__ import annotations

import struct

from java_stream import JavaClass, Ref, Stream, Writer, with_self

BATTLE = "games.strategy.triplea.delegate.battle."
SBR = BATTLE + "StrategicBombingRaidBattle"
AIR = BATTLE + "AirBattle"
L = "L"


def _t(name: str) -> str:
    return "L" + name.replace(".", "/") + ";"


class Save:
    """A real save's stream and what a new battle refers to; `donor`: another save of the same
    TripleA version whose class descriptions stand for those this one lacks (a save with no
    battle holds no AbstractBattle, no ExecutionStack)."""

    def __init__(self, path, donor: Save | None = None):
        self.donor = donor
        from battlecalc.triplea.save import _class_name, _javaobj, _Reader

        _, beans = _javaobj()
        self.path = path
        self.stream = s = Stream.of_save(path)
        self.reader = r = _Reader(beans)
        self.game_data = next(o for o in s.contents if _class_name(o).endswith(".GameData"))
        state = next(o for o in s.contents
                     if _class_name(o).endswith(".BattleExtendedDelegateState"))
        self.tracker = r.get(state, "battleTracker")
        self.pending = r.get(self.tracker, "pendingBattles")
        self.classes = {}
        for span in s.spans:
            desc = getattr(span.content, "classdesc", None)
            while desc is not None:
                self.classes.setdefault(desc.name, desc)
                desc = desc.super_class
        self.new: dict[str, JavaClass] = {}  # classes of the donor's, written here
        self.territories = {r.text(t, "name"): t
                            for t in r.elements(r.get(self.game_data, "map", "territories"))}

    def java(self, name: str) -> JavaClass:
        """The class `name`: this stream's (referred to), or the donor's written anew (the
        same fields, serial number and flags; its superclass this stream's where it has it)."""
        if name in self.classes:
            return JavaClass.of(self.classes[name])
        if name not in self.new:
            desc = self.donor.classes[name]
            self.new[name] = JavaClass(
                name, [(chr(f.type.value), str(f.name),
                        None if getattr(f, "class_name", None) is None else str(f.class_name))
                       for f in desc.fields], uid=desc.serial_version_uid, flags=desc.flags,
                parent=None if desc.super_class is None else self.java(desc.super_class.name))
        return self.new[name]

    def units(self, territory: str, unit_type: str, owner: str, count: int = 1) -> list:
        r = self.reader
        found = [u for u in r.elements(r.get(self.territories[territory], "unitCollection",
                                             "units"))
                 if r.text(r.get(u, "type"), "name") == unit_type
                 and r.name_of(r.get(u, "owner")) == owner]
        assert len(found) >= count, (territory, unit_type, owner, len(found))
        return found[:count]

    def player(self, territory: str, unit_type: str, owner: str):
        return self.reader.get(self.units(territory, unit_type, owner)[0], "owner")

    def enum_value(self, kind: str, constant: str):
        """An enum object of the stream (TC_ENUM: written once, referred to after)."""
        for span in self.stream.spans:
            c = span.content
            if span.type_code == 0x7E and c.classdesc.name == kind and str(c.value) == constant:
                return c
        return None

    def owned(self, unit_type: str, owner: str, count: int) -> list:
        """`count` units of a type and owner, from any territory (a battle's units come from
        where they moved)."""
        r = self.reader
        found = [u for t in self.territories.values()
                 for u in r.elements(r.get(t, "unitCollection", "units"))
                 if r.text(r.get(u, "type"), "name") == unit_type
                 and r.name_of(r.get(u, "owner")) == owner]
        assert len(found) >= count, (unit_type, owner, len(found))
        return found[:count]

    def with_battle(self, build) -> bytes:
        """The stream with a battle added to the tracker's pending battles (a HashSet: its
        size in its custom data, the elements after): build(writer, save) writes it."""
        s = self.stream
        span = s.definition(self.pending)
        self.new = {}  # (the classes written anew: once a stream)
        writer = Writer(s, span.end - 1)
        build(writer, self)
        added = s.edit(span.end - 1, span.end - 1, bytes(writer.out), writer.made)
        # the set's size, in its custom data before the insertion (the same bytes there)
        block = next(x for x in s.children(span) if x.type_code == 0x77)
        at = block.start + 2 + 8
        (size,) = struct.unpack(">i", added[at:at + 4])
        return added[:at] + struct.pack(">i", size + 1) + added[at + 4:]


# ---------------------------------------------------------------------------- Java helpers


def array_list(save: Save, items: list):
    cls = save.java("java.util.ArrayList")

    def write(w: Writer):
        def custom(w2):
            w2.block(struct.pack(">i", max(len(items), 1)))
            for item in items:
                w2.value(item)
        w.obj(cls, {"size": len(items)}, custom)
    return write


def array_deque(save: Save, items: list):
    cls = save.java("java.util.ArrayDeque")

    def write(w: Writer):
        def custom(w2):
            w2.block(struct.pack(">i", len(items)))
            for item in items:
                w2.value(item)
        w.obj(cls, {}, custom)
    return write


def hash_map(save: Save):
    cls = save.java("java.util.HashMap")

    def write(w: Writer):
        w.obj(cls, {"loadFactor": 0.75, "threshold": 0},
              lambda w2: w2.block(struct.pack(">ii", 16, 0)))
    return write


def uuid(save: Save, low: int):
    def write(w: Writer):
        w.obj(save.java("java.util.UUID"), {"leastSigBits": low, "mostSigBits": 42})
    return write


def enum(save: Save, kind: str, constant: str):
    """A new enum object (its class the stream's, or written anew: an enum of a later
    TripleA, BattleState$Side)."""
    def write(w: Writer):
        if kind in save.classes or (save.donor is not None and kind in save.donor.classes):
            cls = save.java(kind)
        else:
            cls = save.new.setdefault(kind, JavaClass(kind, [], flags=0x12,
                                                      parent=save.java("java.lang.Enum")))
        w.enum(cls, constant)
    return write


def dice_roll(save: Save, dice: list[int], hits: int, expected: float):
    """A DiceRoll as TripleA 2.0 writes it (writeExternal: int[] dice, int hits, double
    expected hits); dice packed as value << 16 | rolledAt << 8 | type (1: a hit)."""
    cls = save.java(BATTLE.replace("battle.", "") + "DiceRoll")
    ints = save.java("[I")

    def write(w: Writer):
        w.out += bytes([0x73])
        w.class_desc(cls)
        w._handle()
        w.int_array(ints, dice)
        w.block(struct.pack(">id", hits, expected))
        w.out += bytes([0x78])
    return write


def die(value: int, hit: bool) -> int:
    """A die of TripleA's DiceRoll: `value` 1-6, a hit or a miss."""
    return (value - 1) << 16 | 1 << 8 | (1 if hit else 0)


def casualty_details_class() -> JavaClass:
    """CasualtyDetails (a new class for each save built: a class is written once a stream)."""
    return JavaClass("games.strategy.triplea.delegate.data.CasualtyDetails",
                     [("Z", "autoCalculated", None)], uid=2261683015991514918,
                     parent=JavaClass("games.strategy.triplea.delegate.data.CasualtyList",
                                      [(L, "damaged", "Ljava/util/List;"),
                                       (L, "killed", "Ljava/util/List;")],
                                      uid=6501752134047891398))


def casualty_details(save: Save, killed: list, details: JavaClass):
    def write(w: Writer):
        w.obj(details, {"autoCalculated": True, "damaged": array_list(save, []),
                        "killed": array_list(save, [Ref(u.handle) for u in killed])})
    return write


class Once:
    """An object written where first used, referred to after (its handle kept)."""

    def __init__(self, write):
        self.write, self.handle = write, None

    def __call__(self, w: Writer):
        if self.handle is not None:
            w.value(Ref(self.handle))
        else:
            self.handle = self.write(w)


def abstract_battle_values(save: Save, *, attacker, defender, site: str, attacking: list,
                           defending: list, battle_type: str, bombing: bool, battle_id: int):
    """AbstractBattle's fields of a new battle (TripleA 2.0)."""
    return {
        "attackerLostTuv": 0, "defenderLostTuv": 0, "headless": False, "isAmphibious": False,
        "isBombingRun": bombing, "isOver": False, "round": 1,
        "amphibiousLandAttackers": array_list(save, []), "attacker": Ref(attacker.handle),
        "attackingUnits": array_list(save, [Ref(u.handle) for u in attacking]),
        "battleId": uuid(save, battle_id), "battleResultDescription": None,
        "battleSite": Ref(save.territories[site].handle),
        "battleTracker": Ref(save.tracker.handle),
        "battleType": enum(save, BATTLE + "IBattle$BattleType", battle_type),
        "bombardingUnits": array_list(save, []), "defender": Ref(defender.handle),
        "defendingUnits": array_list(save, [Ref(u.handle) for u in defending]),
        "dependentUnits": hash_map(save), "gameData": Ref(save.game_data.handle),
        "territoryEffects": array_list(save, []),
        "whoWon": Ref(save.enum_value(BATTLE + "IBattle$WhoWon", "NOT_FINISHED").handle)
        if save.enum_value(BATTLE + "IBattle$WhoWon", "NOT_FINISHED") is not None
        else enum(save, BATTLE + "IBattle$WhoWon", "NOT_FINISHED"),
    }


def execution_stack(save: Save, current, queued: list):
    def write(w: Writer):
        w.obj(save.java("games.strategy.triplea.delegate.ExecutionStack"),
              {"currentStep": current, "deque": array_deque(save, queued)})
    return write


# ---------------------------------------------------------------------------- the raid (R1-R5)

# the steps of docs/in-progress.md's raid table, each as (the step object TripleA is executing,
# the steps queued after it): an anonymous step of FireAa, or FireAa itself, ConductBombing and
# its anonymous steps, the raid's own anonymous steps (after the bombing)
RAID_STEPS = ("FireAa queued", "FireAa$1", "FireAa$2", "FireAa$3", "FireAa$4",
              "ConductBombing", "ConductBombing$1", "ConductBombing$2", "$1 (after bombing)")


def raid(step: str, *, bombers: int = 1, aa_hits: int = 0, killed: int = 0,
         bombing_die: int = 4, attacker=("Germany", "bomber", "Germans"),
         site="United Kingdom", guns=("aaGun", "British"), factory=("factory", "British")):
    """build(writer, save): a StrategicBombingRaidBattle of `bombers` bombers on `site`, its
    stack at `step` (RAID_STEPS): the AA rolled `aa_hits` hits (one die a bomber) from
    FireAa$2 on, `killed` of the bombers chosen from FireAa$3 on, the bombing die
    `bombing_die` rolled at ConductBombing$2."""
    assert step in RAID_STEPS, step

    def build(w: Writer, save: Save):
        where, unit, owner = attacker
        planes = (save.units(where, unit, owner, bombers) if bombers == 1
                  else save.owned(unit, owner, bombers))
        gun = save.units(site, *guns)[0]
        plant = save.units(site, *factory)[0]
        battle_cls = JavaClass(SBR, [
            ("I", "bombingRaidTotal", None), (L, "aaTypes", "Ljava/util/List;"),
            (L, "bombingRaidDamage", "Lorg/triplea/java/collections/IntegerMap;"),
            (L, "defendingAa", "Ljava/util/List;"),
            (L, "stack", "Lgames/strategy/triplea/delegate/ExecutionStack;"),
            (L, "steps", "Ljava/util/List;"), (L, "targets", "Ljava/util/Map;")],
            uid=0x75D325936AD1E9AA, parent=save.java(BATTLE + "AbstractBattle"))
        fire_cls = JavaClass(SBR + "$FireAa", [
            ("Z", "determineAttackers", None),
            (L, "casualties", "Lgames/strategy/triplea/delegate/data/CasualtyDetails;"),
            (L, "casualtiesSoFar", "Ljava/util/Collection;"),
            (L, "dice", "Lgames/strategy/triplea/delegate/DiceRoll;"),
            (L, "this$0", _t(SBR)),
            (L, "validAttackingUnitsForThisRoll", "Ljava/util/Collection;")],
            uid=-0x40C78F1470CFDE5E)
        # the anonymous steps of FireAa.execute: javac names the reference to their FireAa
        # this$1 (FireAa is itself an inner class: this$0 is its raid) and the loop's
        # locals they use val$currentTypeAa, val$currentPossibleAa (roll and casualties)
        uids = {1: 379538344036513009, 2: -4658133491636765763, 3: -4989154196975570919,
                4: -3673833177336068509}
        anon = {n: JavaClass(f"{SBR}$FireAa${n}", [
            (L, "this$1", _t(SBR + "$FireAa")), (L, "val$currentTypeAa", "Ljava/lang/String;"),
            *([(L, "val$currentPossibleAa", "Ljava/util/Collection;")] if n <= 2 else [])],
            uid=uids[n]) for n in (1, 2, 3, 4)}
        bombing_cls = JavaClass(SBR + "$ConductBombing", [
            ("[", "dice", "[I"), (L, "this$0", _t(SBR))], uid=0x4D6F6B41677A5B75)
        bombing_anon = {n: JavaClass(f"{SBR}$ConductBombing${n}", [
            (L, "this$1", _t(SBR + "$ConductBombing"))], uid=u)
            for n, u in ((1, -4097858758514452368), (2, 8573539936364094095))}
        raid_anon = {n: JavaClass(f"{SBR}${n}", [(L, "this$0", _t(SBR))], uid=u)
                     for n, u in ((1, 0x3BAB28B096E689C8), (2, -0x6A288A6EA3842FE8))}
        details = casualty_details_class()
        at = RAID_STEPS.index(step)
        rolled = at >= RAID_STEPS.index("FireAa$2")
        chosen = at >= RAID_STEPS.index("FireAa$3")
        shot = planes[:killed] if chosen else []
        battle = {}

        def fire_values():
            return {"determineAttackers": True, "this$0": Ref(battle["h"]),
                    "casualtiesSoFar": array_list(save, [Ref(u.handle) for u in shot]),
                    "validAttackingUnitsForThisRoll": array_list(
                        save, [Ref(u.handle) for u in planes]),
                    "dice": dice_roll(save, [die(1 if i < aa_hits else 4, i < aa_hits)
                                             for i in range(bombers)], aa_hits, bombers / 6)
                    if rolled else None,
                    "casualties": casualty_details(save, shot, details) if chosen else None}

        fire = Once(lambda w2: w2.obj(fire_cls, fire_values()))

        def anonymous(n):
            return lambda w2: w2.obj(anon[n], {
                "this$1": fire, "val$currentTypeAa": "AA",
                "val$currentPossibleAa": array_list(save, [Ref(gun.handle)])})

        dice = at >= RAID_STEPS.index("ConductBombing$2")
        int_array = save.java("[I")
        conduct = Once(lambda w2: w2.obj(bombing_cls, {
            "dice": (lambda w3: w3.int_array(int_array, [bombing_die])) if dice else None,
            "this$0": Ref(battle["h"])}))

        def after(n):
            return lambda w2: w2.obj(raid_anon[n], {"this$0": Ref(battle["h"])})

        def bombing(n):
            return lambda w2: w2.obj(bombing_anon[n], {"this$1": conduct})

        current, queued = {
            "FireAa queued": (None, [fire, conduct, after(1), after(2)]),
            "FireAa$1": (anonymous(1), [anonymous(2), anonymous(3), anonymous(4), conduct,
                                       after(1), after(2)]),
            "FireAa$2": (anonymous(2), [anonymous(3), anonymous(4), conduct, after(1),
                                       after(2)]),
            "FireAa$3": (anonymous(3), [anonymous(4), conduct, after(1), after(2)]),
            "FireAa$4": (anonymous(4), [conduct, after(1), after(2)]),
            "ConductBombing": (conduct, [after(1), after(2)]),
            "ConductBombing$1": (bombing(1), [bombing(2), after(1), after(2)]),
            "ConductBombing$2": (bombing(2), [after(1), after(2)]),
            "$1 (after bombing)": (after(1), [after(2)]),
        }[step]

        def stack(handle):
            battle["h"] = handle
            return execution_stack(save, current, queued)

        values = abstract_battle_values(
            save, attacker=save.reader.get(planes[0], "owner"),
            defender=save.reader.get(gun, "owner"), site=site, attacking=planes,
            defending=[gun, plant], battle_type="BOMBING_RAID", bombing=True, battle_id=7)
        values.update({
            "bombingRaidTotal": 0, "aaTypes": array_list(save, ["AA"]),
            "bombingRaidDamage": lambda w2: w2.obj(
                save.java("org.triplea.java.collections.IntegerMap"),
                {"mapValues": hash_map(save)}),
            "defendingAa": array_list(save, [Ref(gun.handle)]),
            "stack": with_self(stack),
            "steps": array_list(save, ["AA fire", " select AA casualties",
                                       " remove AA casualties", "Strategic bombing raid"]),
            "targets": hash_map(save)})
        w.obj(battle_cls, values)

    return build


# ------------------------------------------------------------------ the air battle (R6-R12)

AIR_STEPS = ("not begun", "InterceptorsLaunch", "AttackersFire queued", "AttackersFire$1",
             "AttackersFire$2", "AttackersFire$3", "DefendersFire$1", "DefendersFire$2",
             "DefendersFire$3", "$1 (casualties removed)")


def air_battle(step: str, *, attacker=(("bomber", "Germans", 1), ("fighter", "Germans", 1)),
               interceptors=("fighter", "British", 1), site="United Kingdom", hits: int = 0):
    """build(writer, save): an AirBattle (1940 2E: before a raid, battle type AIR_RAID) of the
    attacker's units on `site` against `interceptors`, its stack at `step` (AIR_STEPS): the
    attackers' dice rolled from AttackersFire$2 on (`hits` hits), their casualties chosen
    from $3 on, the defenders' likewise; the classes of TripleA 2.0's AirBattle."""
    assert step in AIR_STEPS, step

    def build(w: Writer, save: Save):
        planes = [u for unit, owner, n in attacker for u in save.owned(unit, owner, n)]
        kind, owner, n = interceptors
        guards = save.units(site, kind, owner, n)
        battle_cls = JavaClass(AIR, [
            (L, "attackingWaitingToDie", "Ljava/util/Collection;"),
            (L, "defendingWaitingToDie", "Ljava/util/Collection;"),
            ("Z", "intercept", None), ("I", "maxRounds", None),
            (L, "stack", "Lgames/strategy/triplea/delegate/ExecutionStack;"),
            (L, "steps", "Ljava/util/List;")],
            uid=4686241714027216395, parent=save.java(BATTLE + "AbstractBattle"))
        launch_cls = JavaClass(AIR + "$InterceptorsLaunch", [(L, "this$0", _t(AIR))],
                               uid=4300406315014471768)
        details = casualty_details_class()
        fire_cls, anon = {}, {}
        for side, uid, uids in (("AttackersFire", -5289634214875797408,
                                 (6579019987019614374, 4556409970663527142,
                                  4224354422817922451)),
                                ("DefendersFire", -7277182945495744003,
                                 (5953506121350176595, 6658309931909306564,
                                  4461950841000674515))):
            fire_cls[side] = JavaClass(f"{AIR}${side}", [
                (L, "details", "Lgames/strategy/triplea/delegate/data/CasualtyDetails;"),
                (L, "dice", "Lgames/strategy/triplea/delegate/DiceRoll;"),
                (L, "this$0", _t(AIR))], uid=uid)
            for n, u in zip((1, 2, 3), uids, strict=True):
                anon[(side, n)] = JavaClass(f"{AIR}${side}${n}",
                                            [(L, "this$1", _t(f"{AIR}${side}"))], uid=u)
        cleanup_cls = JavaClass(AIR + "$1", [(L, "this$0", _t(AIR))], uid=-5575569705493214941)
        at = AIR_STEPS.index(step)
        battle = {}

        def fire_values(side: str, rolled: bool, chosen: bool, units: list, shooters: list):
            return {"this$0": Ref(battle["h"]),
                    "dice": dice_roll(save, [die(1 if i < hits else 6, i < hits)
                                             for i in range(len(shooters))], hits,
                                      len(shooters) / 2) if rolled else None,
                    "details": casualty_details(save, units[:hits], details) if chosen
                    else None}

        attack = Once(lambda w2: w2.obj(fire_cls["AttackersFire"], fire_values(
            "AttackersFire", at >= AIR_STEPS.index("AttackersFire$2"),
            at >= AIR_STEPS.index("AttackersFire$3"), guards, planes)))
        defend = Once(lambda w2: w2.obj(fire_cls["DefendersFire"], fire_values(
            "DefendersFire", at >= AIR_STEPS.index("DefendersFire$2"),
            at >= AIR_STEPS.index("DefendersFire$3"), planes, guards)))
        fires = {"AttackersFire": attack, "DefendersFire": defend}

        def anonymous(side, n):
            return lambda w2: w2.obj(anon[(side, n)], {"this$1": fires[side]})

        def launch(w2):
            w2.obj(launch_cls, {"this$0": Ref(battle["h"])})

        def cleanup(w2):
            w2.obj(cleanup_cls, {"this$0": Ref(battle["h"])})

        rest = [cleanup]
        current, queued = {
            "not begun": (None, []),
            "InterceptorsLaunch": (launch, [attack, defend, *rest]),
            "AttackersFire queued": (None, [attack, defend, *rest]),
            "AttackersFire$1": (anonymous("AttackersFire", 1), [
                anonymous("AttackersFire", 2), anonymous("AttackersFire", 3), defend, *rest]),
            "AttackersFire$2": (anonymous("AttackersFire", 2), [
                anonymous("AttackersFire", 3), defend, *rest]),
            "AttackersFire$3": (anonymous("AttackersFire", 3), [defend, *rest]),
            "DefendersFire$1": (anonymous("DefendersFire", 1), [
                anonymous("DefendersFire", 2), anonymous("DefendersFire", 3), *rest]),
            "DefendersFire$2": (anonymous("DefendersFire", 2), [
                anonymous("DefendersFire", 3), *rest]),
            "DefendersFire$3": (anonymous("DefendersFire", 3), rest),
            "$1 (casualties removed)": (cleanup, []),
        }[step]

        def stack(handle):
            battle["h"] = handle
            return execution_stack(save, current, queued)

        values = abstract_battle_values(
            save, attacker=save.reader.get(planes[0], "owner"),
            defender=save.reader.get(guards[0], "owner"), site=site, attacking=planes,
            defending=guards, battle_type="AIR_RAID", bombing=True, battle_id=9)
        values.update({
            "attackingWaitingToDie": array_list(save, []),
            "defendingWaitingToDie": array_list(save, []),
            "intercept": at > AIR_STEPS.index("InterceptorsLaunch"),
            "maxRounds": 1, "stack": with_self(stack),
            "steps": array_list(save, ["Air Battle", "Defender Launches Interceptors",
                                       "Attackers Fire", "Defenders Fire"])})
        w.obj(battle_cls, values)

    return build


# ---------------------------------------------------------------------- a land battle (L1-L15)

# (step, firing side defends?) of docs/in-progress.md's land table, as TripleA 2.0-2.4 stands
# (Fire$N of a Fire; FireAa$N of the land battle's FireAa, its casualties in `casualties`) and
# as TripleA 2.5 and later stand (RollDiceStep, SelectCasualties, MarkCasualties)
LAND_STEPS = ("Fire$1", "Fire$2", "Fire$3", "FireAa$1", "FireAa$2", "FireAa$3",
              "RollDiceStep", "SelectCasualties", "MarkCasualties")
STEPS_FIRE = "games.strategy.triplea.delegate.battle.steps.fire."


def hash_set(save: Save):
    def write(w: Writer):
        w.obj(save.java("java.util.HashSet"), {},
              lambda w2: w2.block(struct.pack(">ifi", 16, 0.75, 0)))
    return write


def land_battle(step: str, *, defending: bool = False, hits: int = 1, aa: bool = False,
                site: str = "Germany"):
    """build(writer, save): a MustFightBattle of 3 Russian infantry and a fighter against 2
    German infantry (and an AA gun: `aa`) at `site`, its stack at `step` (LAND_STEPS), the
    fire of the defender where `defending` (else the attacker's; FireAa: the defender's AA at
    the fighter), its dice of `hits` hits from the select step on, that many casualties chosen
    at the mark step (the first of the target's units)."""
    assert step in LAND_STEPS, step
    aa = aa or step.startswith("FireAa")  # (the AA's fire: the defender's gun at the fighter)

    def build(w: Writer, save: Save):
        attackers = save.owned("infantry", "Russians", 3) + save.owned("fighter", "Russians", 1)
        defenders = save.units(site, "infantry", "Germans", 2) + (
            save.units(site, "aaGun", "Germans") if aa else [])
        russians = save.reader.get(attackers[0], "owner")
        germans = save.reader.get(defenders[0], "owner")
        shooter_defends = defending or aa
        if aa:
            firing, targets = defenders[-1:], attackers[-1:]
        elif shooter_defends:
            firing, targets = defenders[:2], attackers
        else:
            firing, targets = attackers, defenders[:2]
        stage = ("roll" if step.endswith(("$1", "RollDiceStep")) else
                 "select" if step.endswith(("$2", "SelectCasualties")) else "mark")
        rolled, chosen = stage != "roll", stage == "mark"
        shot = targets[:hits] if chosen else []
        roll = dice_roll(save, [die(1 if i < hits else 6, i < hits) for i in range(len(firing))],
                         hits, len(firing) / 3) if rolled else None
        details = casualty_details_class()
        battle = {}
        units = lambda xs: array_list(save, [Ref(u.handle) for u in xs])  # noqa: E731
        if step.startswith("Fire$"):
            uids = {1: 7578210876028725797, 2: -7687053541570519623, 3: -9173385989239225660}
            fire = Once(lambda w2: w2.obj(save.java(BATTLE + "Fire"), {
                "confirmOwnCasualties": True, "defending": shooter_defends, "headless": False,
                "isAmphibious": False, "allEnemyUnitsAliveOrWaitingToDie": units(targets),
                "allEnemyUnitsNotIncludingWaitingToDie": units(targets),
                "allFriendlyUnitsAliveOrWaitingToDie": units(firing),
                "allFriendlyUnitsNotIncludingWaitingToDie": units(firing),
                "amphibiousLandAttackers": units([]), "attackableUnits": units(targets),
                "battle": Ref(battle["h"]), "battleId": uuid(save, 11),
                "battleSite": Ref(save.territories[site].handle),
                "canReturnFire": enum(save, BATTLE + "MustFightBattle$ReturnFire", "ALL"),
                "damaged": units([]) if chosen else None, "dependentUnits": hash_map(save),
                "dice": roll, "firingPlayer": Ref((germans if shooter_defends else
                                                   russians).handle),
                "firingUnits": units(firing),
                "hitPlayer": Ref((russians if shooter_defends else germans).handle),
                "killed": units(shot) if chosen else None,
                "stepName": ("Russians" if shooter_defends else "Germans")
                + " select casualties",
                "territoryEffects": units([]),
                "text": ("Germans" if shooter_defends else "Russians") + " fire"}))
            cls = {n: JavaClass(f"{BATTLE}Fire${n}", [(L, "this$0", _t(BATTLE + "Fire"))],
                                uid=u) for n, u in uids.items()}
            n = int(step[-1])
            current = lambda w2: w2.obj(cls[n], {"this$0": fire})  # noqa: E731
            queued = [lambda w2, k=k: w2.obj(cls[k], {"this$0": fire}) for k in range(n + 1, 4)]
        elif step.startswith("FireAa"):
            # TripleA 2.0's delegate.battle.FireAa (a class of its own: its anonymous steps
            # hold it as this$0, and the locals aaType, firingGroup, validTargets as val$...)
            fire_aa = JavaClass(BATTLE + "FireAa", [
                ("Z", "defending", None), ("Z", "headless", None), ("Z", "isAmphibious", None),
                (L, "aaTypes", "Ljava/util/List;"),
                (L, "allEnemyUnitsAliveOrWaitingToDie", "Ljava/util/List;"),
                (L, "allFriendlyUnitsAliveOrWaitingToDie", "Ljava/util/List;"),
                (L, "amphibiousLandAttackers", "Ljava/util/Collection;"),
                (L, "attackableUnits", "Ljava/util/Collection;"),
                (L, "battle", _t(BATTLE + "MustFightBattle")),
                (L, "battleId", "Ljava/util/UUID;"),
                (L, "battleSite", "Lgames/strategy/engine/data/Territory;"),
                (L, "casualties", "Lgames/strategy/triplea/delegate/data/CasualtyDetails;"),
                (L, "casualtiesSoFar", "Ljava/util/Collection;"),
                (L, "dependentUnits", "Ljava/util/Map;"),
                (L, "dice", "Lgames/strategy/triplea/delegate/DiceRoll;"),
                (L, "firingPlayer", "Lgames/strategy/engine/data/GamePlayer;"),
                (L, "firingUnits", "Ljava/util/Collection;"),
                (L, "hitPlayer", "Lgames/strategy/engine/data/GamePlayer;"),
                (L, "territoryEffects", "Ljava/util/Collection;")], uid=-6406659798754841382)
            fire = Once(lambda w2: w2.obj(fire_aa, {
                "defending": True, "aaTypes": array_list(save, ["AA"]),
                "allEnemyUnitsAliveOrWaitingToDie": units(attackers),
                "allFriendlyUnitsAliveOrWaitingToDie": units(defenders),
                "amphibiousLandAttackers": units([]), "attackableUnits": units(attackers),
                "battle": Ref(battle["h"]), "battleId": uuid(save, 12),
                "battleSite": Ref(save.territories[site].handle),
                "casualties": casualty_details(save, shot, details) if chosen else None,
                "casualtiesSoFar": units(shot), "dependentUnits": hash_map(save),
                "dice": roll, "firingPlayer": Ref(germans.handle), "firingUnits": units(firing),
                "hitPlayer": Ref(russians.handle), "territoryEffects": units([])}))
            uids = {1: 6435935558879109347, 2: 7943295620796835166, 3: -6759782085212899725}
            cls = {n: JavaClass(f"{BATTLE}FireAa${n}", [
                (L, "this$0", _t(BATTLE + "FireAa")), (L, "val$aaType", "Ljava/lang/String;"),
                (L, "val$firingGroup", "Ljava/util/Collection;"),
                (L, "val$validTargets", "Ljava/util/Collection;")], uid=u)
                for n, u in uids.items()}

            def aa_step(k):
                return lambda w2: w2.obj(cls[k], {
                    "this$0": fire, "val$aaType": "AA", "val$firingGroup": units(firing),
                    "val$validTargets": units(targets)})
            n = int(step[-1])
            current, queued = aa_step(n), [aa_step(k) for k in range(n + 1, 4)]
        else:
            # TripleA 2.5 and later: the fire steps of delegate.battle.steps.fire, each with
            # its side, firing group and the round's state (the roll and casualty functions,
            # serialised lambdas, left null: nothing reads them)
            side = enum(save, BATTLE + "BattleState$Side", "DEFENSE" if shooter_defends
                        else "OFFENSE")
            group = Once(lambda w2: w2.obj(JavaClass(STEPS_FIRE + "FiringGroup", [
                (L, "displayName", "Ljava/lang/String;"), (L, "groupName", "Ljava/lang/String;"),
                (L, "firingUnits", "Ljava/util/Collection;"),
                (L, "targetUnits", "Ljava/util/Collection;"),
                ("Z", "suicideOnHit", None)], uid=-6236125682894804895), {
                "displayName": "AA" if aa else "units", "groupName": "AA" if aa else "units",
                "firingUnits": units(firing), "targetUnits": units(targets)}))
            state = Once(lambda w2: w2.obj(JavaClass(STEPS_FIRE + "FireRoundState", [
                (L, "dice", "Lgames/strategy/triplea/delegate/DiceRoll;"),
                (L, "casualties", "Lgames/strategy/triplea/delegate/data/CasualtyDetails;")],
                uid=-3888678807586940147), {
                "dice": roll, "casualties": casualty_details(save, shot, details)
                if chosen else None}))
            common = [(L, "battleState", "Lgames/strategy/triplea/delegate/battle/BattleState;"),
                      (L, "side", "Lgames/strategy/triplea/delegate/battle/BattleState$Side;"),
                      (L, "firingGroup", "L" + (STEPS_FIRE + "FiringGroup").replace(".", "/")
                       + ";"),
                      (L, "fireRoundState", "L" + (STEPS_FIRE + "FireRoundState").replace(
                          ".", "/") + ";")]
            classes = {
                "RollDiceStep": (3248059314449726590, [(L, "rollDice",
                                                        "Ljava/util/function/BiFunction;")]),
                "SelectCasualties": (-8657290250623679619, [
                    (L, "selectCasualties", "Ljava/util/function/BiFunction;")]),
                "MarkCasualties": (-3823676731273987167, [
                    (L, "battleActions", "Lgames/strategy/triplea/delegate/battle/"
                     "BattleActions;"),
                    (L, "returnFire", _t(BATTLE + "MustFightBattle$ReturnFire"))])}
            uid, extra = classes[step]
            cls = JavaClass(STEPS_FIRE + step, common + extra, uid=uid)
            current = lambda w2: w2.obj(cls, {  # noqa: E731
                "battleState": Ref(battle["h"]), "side": side, "firingGroup": group,
                "fireRoundState": state, "battleActions": Ref(battle["h"]),
                "returnFire": enum(save, BATTLE + "MustFightBattle$ReturnFire", "ALL")
                if step == "MarkCasualties" else None})
            queued = []

        def stack(handle):
            battle["h"] = handle
            return execution_stack(save, current, queued)

        values = abstract_battle_values(
            save, attacker=russians, defender=germans, site=site, attacking=attackers,
            defending=defenders, battle_type="NORMAL", bombing=False, battle_id=13)
        values.update({
            "amphibiousAttackFrom": units([]), "attackingFrom": hash_set(save),
            "attackingFromMap": hash_map(save), "maxRounds": -1,
            "attackingUnitsRetreated": units([]), "attackingWaitingToDie": units([]),
            "defendingUnitsRetreated": units([]), "defendingWaitingToDie": units([]),
            "killed": units([]), "killedDuringCurrentRound": units([]),
            "stack": with_self(stack),
            "stepStrings": array_list(save, ["Russians fire", "Germans select casualties",
                                             "Germans fire", "Russians select casualties",
                                             "Remove casualties", "Russians withdraw?"])})
        w.obj(save.java(BATTLE + "MustFightBattle"), values)

    return build

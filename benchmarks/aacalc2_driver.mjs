// Times aacalc2's exact solver (github:mshih01/aacalc2, built from source) for
// benchmarks/bench_exact_peers.py.  Reads one battle a line as JSON on stdin:
//   {"attack": {"inf": 3, ...}, "defense": {...}, "att_ool": ["inf", ...],
//    "def_ool": ["aa", "inf", ...], "is_naval": false, "repeats": 3}
// (unit ids and orders of losses are aacalc2's; an order lists the units lost first first and
// must name every unit present) and answers one JSON line per battle:
//   {"ms": best, "times_ms": [...], "attacker_win", "defender_win", "draw", "stalemate",
//    "complexity"} or {"error": "..."}.  Optional: "prune" (both thresholds, default 1e-12);
// "repeats": 0 answers without timing ("ms": null).
// Each battle is solved once untimed (through aacalc2's internal multiwave(), whose joint
// outcome list gives win / draw / lose / stalemate), then `repeats` times through the public
// multiwaveExternal() with prune and report thresholds 1e-12, timed with performance.now();
// the best time is reported.  Node's start-up and module loading are never timed.
// AACALC2_DIR: the aacalc2 checkout with dist/ built (npm ci && npx tsc).
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const dir = process.env.AACALC2_DIR;
if (!dir) {
  console.error('AACALC2_DIR is not set');
  process.exit(2);
}
const load = (name) => import(pathToFileURL(join(dir, 'dist', name)).href);
const { multiwaveExternal, getInternalInput } = await load('external.js');
const { multiwave } = await load('multiwave.js');

function makeInput(battle) {
  const side = (units, ool) => ({ units, ool, takes: 0, aaLast: false });
  return {
    wave_info: [
      {
        attack: side(battle.attack, battle.att_ool),
        defense: side(battle.defense, battle.def_ool),
        att_submerge: false,
        def_submerge: false,
        att_dest_last: false,
        def_dest_last: false,
        is_crash_fighters: false,
        rounds: 100, // to the end
        retreat_threshold: 0, // never retreat
      },
    ],
    debug: false,
    prune_threshold: battle.prune ?? 1e-12,
    report_prune_threshold: battle.prune ?? 1e-12,
    is_naval: battle.is_naval,
    in_progress: false,
    num_runs: 1,
    verbose_level: 0,
    diceMode: 'standard',
  };
}

// win / draw / lose / stalemate from the joint list of final states (a side is left when its
// survivor string is not empty; aacalc2 removes a defender's lone AA itself)
function outcomes(input) {
  const out = multiwave(getInternalInput(input));
  const res = { attacker_win: 0, defender_win: 0, draw: 0, stalemate: 0 };
  for (const state of out.output[0].casualtiesInfo) {
    const att = state.attacker !== '';
    const def = state.defender !== '';
    const key = att ? (def ? 'stalemate' : 'attacker_win') : def ? 'defender_win' : 'draw';
    res[key] += state.prob;
  }
  res.complexity = out.complexity;
  return res;
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (!line.trim()) continue;
  let answer;
  try {
    const battle = JSON.parse(line);
    const input = makeInput(battle);
    answer = outcomes(input);
    const times = [];
    for (let i = 0; i < (battle.repeats ?? 3); i++) {
      const t0 = performance.now();
      const output = multiwaveExternal(input);
      times.push(performance.now() - t0);
      answer.attacker_survives = output.attack.survives[0];
      answer.defender_survives = output.defense.survives[0];
    }
    answer.times_ms = times;
    answer.ms = times.length ? Math.min(...times) : null;
  } catch (err) {
    answer = { error: String(err && err.stack ? err.stack : err) };
  }
  process.stdout.write(JSON.stringify(answer) + '\n');
}

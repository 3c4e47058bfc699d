"""Exact solver: propagate probability through the compiled tables.

A side's state only moves forward (casualty steps are never undone, submerging and units lost
without dice move to later states), so within one attacker block the state pairs can be
swept in order (attacker state, defender state): every predecessor of a pair comes before it.
The only cycle is "nothing changes this round", summed in closed form by dividing by
(1 - its probability).  The first rounds are played one at a time where anything depends on
the round (round-1 bombardment, submerging at the end of a round, a retreat after round R, the
law of the number of rounds); then one sweep finishes the battle.  Attacker blocks (one per
outcome of round-1 AA fire) are independent and may be solved in parallel; blocks of the units
that stay after a partial amphibious retreat start from the mass the first blocks send them.
On land a block mostly reaches states of block 0 (the same units) after a few casualties, or at
once where aircraft are its first casualties: such blocks are solved together, in one table
where each of those states is played once (merged_walks).  The closed sweep of two single walks
(land; sea battles without submarines: RU_SIMPLE, compile._simple) plays a row of pairs (one
attacker state) at a time: the attacker's hit law is the same along the row (_sweep_walks).
The general (sea) closed sweep plays a round where subs strike in two phases (_play_phased):
the strikes move each pair's mass into a table of the pairs after the strikes, and general
fire is played once from each pair of that table, not once per strike outcome of every pair.

Pruning: hit counts less likely than solver.Limits.hit_eps are cut from the tables (rows
R_LO..R_HI), transitions moving less than `eps` probability are skipped, and states holding
less than `state_eps` are not played on; a big battle (PRUNE_PAIRS state pairs or more) is also
pruned within a budget (PRUNE_BUDGET, shared out among its blocks): states below
PRUNE_STATE_EPS, and tails of the hit laws of up to PRUNE_TAIL_EPS a round (land fast path).
All of it is reported as pruned mass. """

# njit code only, in three modules: pairs (entering and finishing a pair, the mass tables),
# fire (one round from a pair) and sweep (the sweeps and the entries over blocks).  The drivers,
# the cost model and the choice of a variant are battlecalc/solver's.

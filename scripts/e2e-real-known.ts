/**
 * Real-server criteria that the limiter does not meet yet, each with the problem and the figures
 * of the runs that showed it (docs/real-servers.md). `npm run e2e:real` and `npm run e2e:inbound`
 * print them as known and exit 1 only for a criterion that fails and is not listed here; a listed one
 * that is met is printed as such (remove it then). Keys: `server / run / criterion`, as the harness
 * names them (e2e:inbound's server is `inbound C x ms`, its run `defaults`).
 */
// On a quiet machine (load average 1.1-2.2) the v0.4 loop met 20 of 20 criteria on 2026-11-30 and
// 24 of 26 in each of two runs on 2026-12-01 (the limit swing added). Both misses of each run are
// PostgreSQL's. Until 2026-12-02 its query was not the CPU-bound one it was meant to be: in FROM,
// generate_series materialised its rows and spilled to a temp file past ~100k rows, and JIT compiled
// some plans and not others, so a calibration near either edge made the service time bimodal and the
// knee moved 3, 2, 6 over three quiet runs. With the query streaming (scripts/e2e-real.ts, cpuQuery)
// and jit off, the first run measured a goodput knee of 6 while the upstream p90 reached 2x no-load
// at cap 3 (3x at cap 5): the two criteria ask for different limits on this machine.
const POSTGRES_KNEE =
  "PostgreSQL's goodput on this 2-core machine (the server and the client share the cores) keeps rising past the " +
  'latency knee: with the CPU-bound query (jit off, 10.2 ms alone) the fixed caps gave 182/s at 2, 195/s at 3, 255/s at 5 and ' +
  '283/s at 10 (knee 6) while the upstream p90 read 13.6, 21.4 and 30.3 ms (no-load 10.0): a limit median in [0.7, 2] x 6 ' +
  'would break the p90 bound of 2x no-load. vegas held 3: goodput 0.92 / 0.97x the best fixed cap, upstream p90 1.83 / 1.88x. ' +
  'Before the query was fixed, the knee measured 2 on some runs and the p90 read 2.13-2.26x there';
// Found on 2026-12-02 with the machine shared (load average 2-4 at the start of several runs): both
// criteria below also fail on the tree before adr/0096 (40f1f3c), so they are the loop's, not that
// change's, and they are open problems of the controller, listed so CI does not pass or fail on the luck of a run.
const SMALL_KNEE_DITHER =
  'At a knee of 3 (gunicorn with 2 workers) vegas holds an estimate near 3 and error diffusion admits 2 part of the time: ' +
  'the limit dips under 0.7 x 3 = 2.1 near the end of the 15 s phase (changes "3->2 queue-within-band", no drain). ' +
  'Runs of 2026-12-02: 40f1f3c failed 2 of 2 (never, 14.4 s), this tree 3 of 5 (12.7 s, never, 14.8 s; 0.0 s twice); ' +
  'every recorded run before met it at 0.0 s. Fifth session (same loop): the full run met it at 0.0 s; two gunicorn-only runs missed, ' +
  '11.6 s (a latency jump drained to 1.14 calls and re-measured the baseline at one call) and 12.6 s (no jump: an estimate of 2.90 ' +
  "admitted 2 for one window). The simulator's workers-halve (C = 4 -> 2 -> 4) re-converges in 0.1-2.5 s on 32 seeds: with 2 " +
  'workers the goodput knee is 3, one call above the latency knee vegas sees (adr/0104). Its backlog variant, workers-halve-backlog ' +
  "(no 429s, as gunicorn), reproduces the jump: 11 of 64 seeds in 10.4-12.5 s (adr/0118), 2 of 64 in 10.4-10.7 s since a jump's settling " +
  'waits for 8 answers (adr/0119; six real runs of 2026-12-05, three a tree: 1 of 3 met on each; three misses were the dither, ' +
  'one the jump at 10.3 s); the dither it does not';
const DEMO_SWING =
  "At the demo's knee of 6-7 vegas's band is 0.7-1.4 calls and a no-queue window grows by beta, so the limit cycles " +
  '6 -> 8 or 9 -> 7 and its p10 or p90 lands one call outside +-20% of a median of 7 (29% against 20%). ' +
  'Runs of 2026-12-02, closed or open loop failing: 40f1f3c 2 of 5, this tree 5 of 8, with either adr/0096 switch off 2 of 4 (too few runs to tell the trees apart). ' +
  'A traced open-loop run of 2026-12-02 (E2E_TRACE=1) shows a second cause: the cold start drained 16 -> 2 (2.98 in whole calls), ' +
  'measured its first baseline at 2 calls for 8 s, and grew a call per 2 s window to 7 at 15 s, so the p10 (5) is the ramp inside the 10 s settle, not a cycle';
const POSTGRES_SMALL_KNEE =
  'When the knee reads 2 the limit holds 3, one call past it, and on two cores shared by the server and the client a third query ' +
  'costs more than it serves: fixed caps 177/s at 2 and 156/s at 3, the defaults 154/s (0.87x the best fixed cap; upstream p90 2.9x). ' +
  'Full runs of 2026-12-02 on a quiet machine: 0.897x (knee 2), 0.91x (knee 4, met), 0.87x (knee 2), 0.85x (knee 2; limit median 2, ' +
  'upstream p90 1.82x); a PostgreSQL-only run met it at 0.99x (knee 2, limit 3). The open loop shows it too: 1.03x and 0.90x in the ' +
  "twenty-fifth session's full runs, 0.88x and 1.23x in the twenty-sixth's (the miss: knee 2, best fixed cap 4 at 186/s, limit median 2; the loop's decisions " +
  "identical to the previous tree's on every simulated run, so the run, not the change)";
// Found on 2026-12-03 (ninth session): not checked on older trees. Full runs that missed gunicorn's
// swing: the fourth session's first (closed loop 33 %), the seventh's first (40 % and 33 %), the ninth's.
const GUNICORN_SWING =
  "At gunicorn's knee of 5 the demo's cycle: a no-queue window grows by beta (1.1 calls at 4.6), the next windows shrink by about " +
  '0.6, so the estimate cycles 4.6 -> 5.7-5.9 -> 5.2 -> 4.6, and error diffusion admits the floor or the ceiling of each (a traced ' +
  'gunicorn-only run of the ninth session, which met the bound at 20%: 4-6 around 5). The misses (33%: p10 4 at a median of 6; ' +
  '40%: 4-7 around 5) were not traced. Growing by alpha instead of beta, or not jumping, costs 2 of 512 simulated gate runs ' +
  '(docs/ablation.md, ninth session)';
// Found on 2026-12-07 by the thinking-callers run added with adr/0141 (docs/real-servers.md, run 6).
const DEMO_THINKING_CYCLE =
  "12 callers who think 21 ms between calls on the demo's 6 slots of 40 ms: the slow start ends app-limited and its " +
  "baseline window measures the callers' queue (58 ms, 1.40-1.42x the no-load mean) on 3 of 4 runs of 2026-12-07 before " +
  'adr/0142 and 1 of 3 after it (the others, a full run and a local CI run: 1.07x and 1.09x, limit median 8), and the limit holds 24, four times the knee. With service and think times nearly constant the callers ' +
  'fall into a cycle in which every call waits about the same (traced: mean latency 57.1-61.2 ms at 7 to 12 calls in flight ' +
  "at admission). adr/0142's probe (since adr/0143 run for every window adr/0139's rule flags), which fixed the same cycle " +
  'on php-fpm (knee 16), does not run here: traced, the slow start grew 8 -> 13 in the round that began at 8 with no rise seen (a round of 8 calls ' +
  'has a noise bound near 30%; 8 calls on 6 slots wait a third), so the window at 8.8 in flight and 1.43x the pool is past ' +
  "what Little's bound lets our queue explain over a tested limit of 8, and reads as the upstream's. The tested limit is " +
  "the simulator's demand-step-closed-c6 k = 153 problem too (rounds too small to see the knee; 1.43x there). Gunicorn's thinking callers (8 on 4 workers) exit the " +
  'slow start on a rise instead, and its drain measures the baseline (0.97-0.98x in 4 of 4 runs)';
// Found on 2026-12-07 in php-fpm's third run (adr/0142's tree; the first two met it at 11-17%).
const PHP_FPM_RAMP =
  "At php-fpm's knee of 16 the cold start drains to half the concurrency it served (64 -> 8, drainGain 0.5) and vegas grows " +
  'back a call or two per 2 s window (8 -> 18 by 13.8 s, traced), so the ramp runs past the 10 s settle and its p10 (15) ' +
  "lands outside +-20% of the median (19): 21%. The first slow start does not return to its exit round's served concurrency " +
  "(adr/0137 rejected that: clients that start together were left unfair); the demo's swing entry records the same ramp";
// Found on 2026-12-04 (sixteenth session) by `npm run e2e:inbound`, issue 14's second trial re-run
// (scripts/e2e-inbound.ts; docs/real-servers.md, "The inbound app").
const INBOUND_BUSY_MACHINE =
  'At 32 x 30 ms (1 067 calls/s) the three processes share 2 cores and keep about 1.5 of them busy (three runs: load 0.57-0.84, ' +
  'app 0.60-0.74, upstream 0.14-0.23), and served latency sits 10-30% over the one-connection no-load latency whatever the limit: the upstream p50 ' +
  "read 37 ms at a limit of 21 (16 in flight) and 37-42 ms at 36-39 (27 in flight), with 32 servers and no queue. vegas's band " +
  'is 5-13% of latency at L = 20-40 (alpha(L) / L = 0.085 (L / 10)^-0.4, twice that for beta), so that offset reads as queue, ' +
  'and where the limit settles depends on the machine in the seconds after the drain (16 -> 5, 32 -> 10-11 at 0.6 s; baselines 35-36 ms ' +
  'in good and bad runs alike). Of 11 runs, 5 settled at 36-46 (goodput 1.11-1.30x the fixed cap of 32, in flight 0.86-1.19 C) and 6 at ' +
  '15-22 (0.51-0.73x; limit median 0.47-0.69 C; in flight 0.35-0.51 C); the last ran with adr/0114, whose raise needs our in-flight halved. ' +
  'The same physics as the PostgreSQL entries: the client and the server share the cores, and the latency knee the limiter sees is ' +
  "not the goodput knee. The issue's own 8 x 50 ms and 12 x 25 ms met every criterion in every run until a local CI run of " +
  '2026-12-07 (right after the test suite): 12 x 25 ms served 0.81x the fixed cap of 12 at a limit median of 10 (0.83 C) with 8.2 in ' +
  'flight, the limit not full while the load process kept a whole core busy (1.00 of 2); not traced further. adr/0115 measures a ' +
  'steady-slowdown collapse in the simulator (1.15x at C = 50); these runs may be the same mechanism, not traced to it. ' +
  "On adr/0122's tree (2026-12-05) two full runs settled low (goodput 0.65-0.66x, limit median 0.59-0.69 C) and a traced run of " +
  '32 x 30 ms alone met all four (limit 29-37 after 13 s, goodput 1.01x); its only drain was the first, at 0.79 s, so no re-measure ran';
// Found on 2026-12-07 in a local CI run (load average 2.0 at the start; PostgreSQL's knee read 3).
const POSTGRES_SMALL_KNEE_SWING =
  "At PostgreSQL's latency knee of 2 (the two cores) vegas's estimate sits at 1.9-2.3 and error diffusion admits 1, 2 or 3 " +
  '(a traced PostgreSQL-only run of 2026-12-07: changes 3 -> 2 queue-above-beta, 2 -> 3 queue-below-alpha every window or two). ' +
  'At a median of 2 the bound is one call, 50%, and a window at 4 breaks it: p10 2, median 2, p90 4 (100%) in the closed loop of ' +
  "that CI run; the traced run met it at 50% in both loops. The gunicorn entry's dither at a knee of 3, one call lower";
// The few-callers runs (adr/0139, 2026-12-07) cycle the same way at the same knees: gunicorn 40% (5-7 around 5) in a
// first run and 20% (4-6 around 5) in the full one; the demo 25% (6-8 around 8) in the full run. Both learnt about
// 1.0x their no-load latency in both runs (0.99-1.04x on gunicorn, 1.00x on the demo in the full run), and again with
// adr/0143's probe in place of the pool (1.00x and 0.97x, a full run).
export const KNOWN_REAL_SERVER_FAILURES: Readonly<Record<string, string>> = {
  'postgres / closed loop / goodput': POSTGRES_SMALL_KNEE,
  'postgres / open loop / goodput': POSTGRES_SMALL_KNEE,
  'gunicorn / phase change / re-converged after 4 -> 2 workers': SMALL_KNEE_DITHER,
  'gunicorn / closed loop / limit swing': GUNICORN_SWING,
  'gunicorn / open loop / limit swing': GUNICORN_SWING,
  'gunicorn / few callers / limit swing': GUNICORN_SWING,
  'gunicorn / thinking callers / limit swing': GUNICORN_SWING,
  'demo / closed loop / limit swing': DEMO_SWING,
  'demo / open loop / limit swing': DEMO_SWING,
  'demo / few callers / limit swing': DEMO_SWING,
  'demo / thinking callers / limit swing': DEMO_SWING,
  'demo / thinking callers / limit median': DEMO_THINKING_CYCLE,
  'demo / thinking callers / baseline': DEMO_THINKING_CYCLE,
  'php-fpm / closed loop / limit swing': PHP_FPM_RAMP,
  'php-fpm / open loop / limit swing': PHP_FPM_RAMP,
  'postgres / closed loop / upstream p90': POSTGRES_KNEE,
  'postgres / open loop / upstream p90': POSTGRES_KNEE,
  'postgres / closed loop / limit median': POSTGRES_KNEE,
  'postgres / open loop / limit median': POSTGRES_KNEE,
  'postgres / closed loop / limit swing': POSTGRES_SMALL_KNEE_SWING,
  'postgres / open loop / limit swing': POSTGRES_SMALL_KNEE_SWING,
  "inbound 32 x 30 ms / defaults / goodput / fixed cap 32's": INBOUND_BUSY_MACHINE,
  'inbound 32 x 30 ms / defaults / limit median / C': INBOUND_BUSY_MACHINE,
  "inbound 12 x 25 ms / defaults / goodput / fixed cap 12's": INBOUND_BUSY_MACHINE,
};

export function knownKey(server: string, run: string, name: string): string {
  return `${server} / ${run} / ${name}`;
}

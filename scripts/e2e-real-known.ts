/**
 * Real-server criteria that the limiter does not meet yet, each with the problem and the figures
 * of the runs that showed it (docs/real-servers.md). `npm run e2e:real` prints them as known and
 * exits 1 only for a criterion that fails and is not listed here; a listed one that is met is
 * printed as such (remove it then). Keys: `server / run / criterion`, as the harness names them.
 */
export const KNOWN_REAL_SERVER_FAILURES: Readonly<Record<string, string>> = {
  'postgres / closed loop / limit median':
    'the knee of a CPU-bound database on a shared 2-core machine is not stable (3-32 between runs with 2 s per fixed cap); ' +
    'the limiter settled at 2-7, below 0.7 x the measured knee in 3 of 4 runs of the new controller',
  'postgres / open loop / limit median': 'as the closed loop: limit median 3-4 against a measured knee of 10-16',
  'postgres / closed loop / goodput':
    'goodput 0.41-0.83 of the best fixed cap: the limit settles low when the machine is busy (the database competes with the load generator for 2 cores)',
  'postgres / open loop / goodput': 'goodput 0.69-0.73 of the best fixed cap, the same cause',
  'postgres / closed loop / upstream p90':
    'upstream p90 2.15x its no-load p90 in one run of five (bound 2x); 1.12-1.89x in the others',
  'postgres / open loop / upstream p90':
    'upstream p90 2.15x its no-load p90 in one run of five (bound 2x), at load average 11',
  'gunicorn / phase change / re-converged after 2 -> 4 workers':
    're-converged in 2.2 s in one run and 14.3 s (bound 10 s) in another: growth back after a capacity rise is Vegas additive',
};

export function knownKey(server: string, run: string, name: string): string {
  return `${server} / ${run} / ${name}`;
}

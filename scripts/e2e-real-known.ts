/**
 * Real-server criteria that the limiter does not meet yet, each with the problem and the figures
 * of the runs that showed it (docs/real-servers.md). `npm run e2e:real` prints them as known and
 * exits 1 only for a criterion that fails and is not listed here; a listed one that is met is
 * printed as such (remove it then). Keys: `server / run / criterion`, as the harness names them.
 */
// On a quiet machine (load average 1.1-2.2) the v0.4 loop met 20 of 20 criteria on 2026-11-30 and
// 24 of 26 in each of two runs on 2026-12-01 (the limit swing added). Both misses of each run are
// PostgreSQL's, and which two depends on the knee the run measured; on a loaded machine it misses
// more (PostgreSQL's knee moved 3-32 between runs): run it quiet.
const POSTGRES_KNEE =
  "PostgreSQL's goodput knee on this 2-core machine (the server and the client share the cores) moved 3, 2, 6 over three quiet runs " +
  'while vegas held 3 in each (its band at L = 3 allows 0.4-0.8 of a query queued): at a knee of 2 one query waits and the ' +
  'upstream p90 read 2.13-2.26x no-load (<= 2); at a knee of 6 the limit median 3 is under 0.7 x 6, though goodput was ' +
  '0.92-0.98x the best fixed cap and the upstream p90 1.56x, on a goodput curve flat within 5% from cap 5 (120.7-136.7/s) ' +
  'whose upstream p90 doubles at cap 3 already';
export const KNOWN_REAL_SERVER_FAILURES: Readonly<Record<string, string>> = {
  'postgres / closed loop / upstream p90': POSTGRES_KNEE,
  'postgres / open loop / upstream p90': POSTGRES_KNEE,
  'postgres / closed loop / limit median': POSTGRES_KNEE,
  'postgres / open loop / limit median': POSTGRES_KNEE,
};

export function knownKey(server: string, run: string, name: string): string {
  return `${server} / ${run} / ${name}`;
}

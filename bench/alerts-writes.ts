// alerts-writes: whether evaluations delay writes (contract §16): single POSTs one after another, in 10 s phases
// without and with the rules (a round at the start of each 10 s, as their `every` asks), alternated in pairs in one
// run; each POST's latency through app.handle, the evaluations sharing its event loop as in a server. Without the
// rules, the POSTs go to a workspace that has none; with them, to the rules' own, whose count series count each
// committed block. Most POSTs of a phase come after its round: the POSTs begun while a round ran are shown apart,
// beside the POSTs of the same span at the start of the phases without rules. The process's CPU a POST, per kind.
const PHASE_MS = 10_000;

const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

/** Post is one POST's start (ms into its phase) and latency. */
interface Post {
  at: number;
  ms: number;
}

/** latencies is p50, p99 and the largest of some POSTs' latencies, and the CPU a POST when it is known. */
export function latencies(what: string, ms: number[], cpuMs?: number) {
  const sorted = [...ms].sort((a, b) => a - b);
  const f = (x: number | undefined) => (x === undefined ? "-" : x.toFixed(1));
  const cpu = cpuMs === undefined ? "-" : `${((1000 * cpuMs) / sorted.length).toFixed(0)} µs`;
  return { what, posts: sorted.length, p50_ms: f(pct(sorted, 50)), p99_ms: f(pct(sorted, 99)), max_ms: f(sorted.at(-1)), cpu_a_post: cpu };
}

/** cpuMs is this process's CPU time so far, user and system. */
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** postsDuring posts one after another until `work` settles; each POST's start and latency. */
export async function postsDuring(post: () => Promise<void>, work: Promise<unknown>): Promise<Post[]> {
  let done = false;
  const settled = work.finally(() => (done = true));
  const start = performance.now();
  const out: Post[] = [];
  while (!done) {
    const t = performance.now();
    await post();
    out.push({ at: t - start, ms: performance.now() - t });
  }
  await settled;
  return out;
}

/**
 * writeLatency alternates `pairs` phases without and with the rules: `postWithout` is one single POST to a workspace
 * without rules, `postWith` one to the rules' workspace, `round` one round of every rule.
 */
export async function writeLatency(postWithout: () => Promise<void>, postWith: () => Promise<void>, round: () => Promise<unknown>, pairs = 4) {
  const phases: { rules: boolean; posts: Post[]; roundMs: number; cpuMs: number }[] = [];
  for (let p = 0; p < 2 * pairs; p++) {
    const rules = p % 2 === 1;
    const start = performance.now();
    const cpu = cpuMs();
    let roundMs = 0;
    const evaluating = rules ? round().then(() => (roundMs = performance.now() - start)) : Promise.resolve();
    const posts = await postsDuring(rules ? postWith : postWithout, Promise.all([evaluating, Bun.sleep(PHASE_MS)]));
    phases.push({ rules, posts, roundMs, cpuMs: cpuMs() - cpu });
  }
  const of = (rules: boolean) => phases.filter((x) => x.rules === rules);
  const all = (rules: boolean) => of(rules).flatMap((x) => x.posts.map((p) => p.ms));
  const cpu = (rules: boolean) => of(rules).reduce((n, x) => n + x.cpuMs, 0);
  // the span of each phase without rules matched to the round of the phase after it
  const early: number[] = [];
  const during: number[] = [];
  for (let i = 0; i + 1 < phases.length; i += 2) {
    const span = phases[i + 1].roundMs;
    for (const p of phases[i].posts) if (p.at < span) early.push(p.ms);
    for (const p of phases[i + 1].posts) if (p.at < span) during.push(p.ms);
  }
  const rounds = of(true).map((x) => x.roundMs.toFixed(0));
  return {
    pooled: [
      latencies("single POST, a workspace without rules (all)", all(false), cpu(false)),
      latencies("single POST, 100 rules evaluated every 10 s (all)", all(true), cpu(true)),
      latencies("  without rules, the span a round took at the phase's start", early),
      latencies(`  begun while a round ran (rounds of ${rounds.join(", ")} ms)`, during),
    ],
  };
}

/**
 * bulkCost posts `bodies` bulk bodies one after another to each workspace in turn, `pairs` times: the rules' own,
 * whose count series count each committed block, and one without rules. Entries a second and the process's CPU an
 * entry (every thread) for each.
 */
export async function bulkCost(postWithout: (i: number) => Promise<number>, postWith: (i: number) => Promise<number>, bodies = 40, pairs = 3) {
  const sums = { without: { entries: 0, ms: 0, cpu: 0 }, with: { entries: 0, ms: 0, cpu: 0 } };
  let next = 0;
  for (let p = 0; p < 2 * pairs; p++) {
    const side = p % 2 === 0 ? sums.without : sums.with;
    const post = p % 2 === 0 ? postWithout : postWith;
    const t = performance.now();
    const c = cpuMs();
    for (let b = 0; b < bodies; b++) side.entries += await post(next++);
    side.ms += performance.now() - t;
    side.cpu += cpuMs() - c;
  }
  const row = (what: string, x: typeof sums.with) => ({
    what,
    entries: x.entries,
    entries_a_s: Math.round((1000 * x.entries) / x.ms),
    cpu_an_entry: `${((1000 * x.cpu) / x.entries).toFixed(1)} µs`,
  });
  return [row("bulk POST /logs/bulk, a workspace without rules", sums.without), row("bulk POST /logs/bulk, the 100 rules' workspace", sums.with)];
}

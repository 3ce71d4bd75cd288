// alerts-writes: whether evaluations delay writes (contract §16): single POSTs one after another, in 10 s phases
// without and with the rules evaluated (a round at the start of each 10 s, as their `every` asks), alternated in
// pairs in one run; each POST's latency through app.handle, the evaluations sharing its event loop as in a server.
const PHASE_MS = 10_000;

const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

/** writeLatency alternates `pairs` phases without and with rounds; `post` is one single POST, `round` one round of every rule. */
export async function writeLatency(post: () => Promise<void>, round: () => Promise<unknown>, pairs = 3) {
  const phases: { rules: boolean; ms: number[]; rounds: number }[] = [];
  for (let p = 0; p < 2 * pairs; p++) {
    const rules = p % 2 === 1;
    const ms: number[] = [];
    let rounds = 0;
    let evaluating: Promise<unknown> = Promise.resolve();
    const end = performance.now() + PHASE_MS;
    if (rules) {
      rounds++;
      evaluating = round();
    }
    while (performance.now() < end) {
      const t = performance.now();
      await post();
      ms.push(performance.now() - t);
    }
    await evaluating;
    phases.push({ rules, ms, rounds });
  }
  const summary = (rules: boolean) => {
    const ms = phases
      .filter((x) => x.rules === rules)
      .flatMap((x) => x.ms)
      .sort((a, b) => a - b);
    return { rules, posts: ms.length, p50_ms: pct(ms, 50), p99_ms: pct(ms, 99), max_ms: ms[ms.length - 1] };
  };
  const each = phases.map((x, i) => {
    const ms = [...x.ms].sort((a, b) => a - b);
    return { phase: i + 1, rules: x.rules, posts: ms.length, p99_ms: pct(ms, 99), max_ms: ms[ms.length - 1] };
  });
  return { pooled: [summary(false), summary(true)], each };
}

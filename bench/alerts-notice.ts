// alerts-notice: how long after the evaluation that decided it a notice reaches a loopback webhook (contract §16 asks
// at most 2 s). The deciding rule sorts first among the rules, so the round's start is its evaluation's start; each
// sample is one transition, firing and resolved in turn, each checked to arrive once with the status decided.
import type { compose } from "../src/compose.ts";

type Sluice = ReturnType<typeof compose>;

/** noticeLatency measures `samples` notices; `at` moves the server's clock, `call` posts to the workspace API with the key given. */
export async function noticeLatency(
  s: Sluice,
  at: (ms: number) => void,
  now: () => number,
  call: (path: string, body: unknown, key: string) => Promise<Record<string, unknown>>,
  key: string,
  samples = 20,
) {
  const got: { status: string; at: number }[] = [];
  const receiver = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const body = (await req.json()) as { status: string };
      got.push({ status: body.status, at: performance.now() });
      return new Response("");
    },
  });
  try {
    const channel = await call("/alerts/channels", { name: "latency", type: "webhook", config: { url: `http://127.0.0.1:${receiver.port}` } }, key);
    await call(
      "/alerts/rules",
      { name: "latency", query: "action=bench.latency", window: "10s", every: "10s", condition: { op: ">", threshold: 0 }, channels: [channel.id] },
      key,
    );
    const ms: number[] = [];
    for (let i = 0; i < samples; i++) {
      const firing = i % 2 === 0;
      if (firing) await call("/logs", { action: "bench.latency", level: "error", clientTimestamp: new Date(now()).toISOString() }, key);
      at((Math.floor(now() / 10_000) + 1) * 10_000 + 1000); // the next instant: its window holds the entry, or no longer does
      const before = got.length;
      const start = performance.now();
      await s.evaluator.tick();
      const deadline = performance.now() + 10_000;
      while (got.length === before && performance.now() < deadline) await Bun.sleep(1);
      if (got.length !== before + 1 || got[before].status !== (firing ? "firing" : "resolved"))
        throw new Error(`BUG: transition ${i} sent ${JSON.stringify(got.slice(before))}, not one ${firing ? "firing" : "resolved"} notice`);
      ms.push(got[before].at - start);
    }
    ms.sort((a, b) => a - b);
    return { samples, p50_ms: ms[Math.floor(samples / 2)], max_ms: ms[samples - 1] };
  } finally {
    receiver.stop(true);
  }
}

// Shared by the shipper tests (contract §11): a real Sluice listening on 127.0.0.1 for real clients, and its stored entries.
import { startTestSluice, WS, type TestSluice } from "./sluice.ts";

export interface Listening {
  s: TestSluice;
  base: string;
  port: number;
  stop(): Promise<void>;
}

/** listen starts a test Sluice on 127.0.0.1 and a free port, so that clients speak HTTP to it. */
export function listen(opts: Parameters<typeof startTestSluice>[1] = {}): Listening {
  const s = startTestSluice(undefined, opts);
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (request) => s.app.handle(request) });
  return {
    s,
    port: server.port!,
    base: `http://127.0.0.1:${server.port}`,
    async stop() {
      await server.stop(true);
      await s.close();
    },
  };
}

export type Stored = {
  id: string;
  action: string;
  level: string;
  message: string | null;
  tags: string[];
  client_timestamp: string;
  actor: Record<string, unknown> | null;
  target: Record<string, unknown> | null;
  context: Record<string, unknown> | null;
  metadata: Record<string, unknown> | null;
};

/** storedEntries reads back what the key's environment holds, oldest first. */
export async function storedEntries(s: TestSluice, key: string): Promise<Stored[]> {
  const r = await s.call("GET", `${WS}/logs?pageSize=100`, { key });
  if (r.status !== 200) throw new Error(`GET /logs answered ${r.status}: ${await r.text()}`);
  return ((await r.json()) as Stored[]).reverse();
}

/** until polls `check` (every 50 ms, at most `ms`) until it gives a value that is not undefined. */
export async function until<T>(check: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`gave up after ${ms} ms`);
    await Bun.sleep(50);
  }
}

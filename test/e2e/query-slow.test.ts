// A slow query holds no other request: a full scan runs in time slices, so a health check, a write and another
// read sent while it runs are answered before it ends; a read past its time budget answers 400 and says how to narrow it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { IdGenerator } from "../../src/ids.ts";
import type { Entry } from "../../src/storage/entries.ts";
import { WS, entry, removeDir, startTestSluice, type TestSluice } from "../helpers/sluice.ts";

const ENTRIES = 100_000;
const BUDGET_MS = 15;
// every entry's context is parsed and searched: the slowest kind of read, a few hundred ms over these entries;
// a message filter reads every message, tens of ms
const SLOW = { query: 'context.request_id~"zz-no-such-thing"' };

let quick: TestSluice; // the default budget
let tight: TestSluice; // the same entries, a budget of BUDGET_MS
let key: string;
let tightKey: string;

/** load stores ENTRIES entries directly (faster than HTTP), blocks of 1,000 a millisecond apart, up to a minute ago. */
async function load(t: TestSluice): Promise<string> {
  const ws = await t.workspace();
  const ids = new IdGenerator();
  const start = Date.now() - 60_000;
  for (let b = 0; b < ENTRIES / 1000; b++) {
    const { ms, ids: fresh } = ids.next(1000, start + b);
    const entries = fresh.map(
      (id, i): Entry => ({
        id,
        level: "info",
        action: "order.paid",
        message: `paid order ${b * 1000 + i}`,
        tags: ["shop"],
        clientMs: ms,
        actor: { id: `user-${i % 97}` },
        target: null,
        context: { request_id: `req-${b * 1000 + i}`, region: "eu" },
        metadata: null,
      }),
    );
    await t.svc.entries.append({ ws: ws.id, env: "production" }, ms, entries, -1);
  }
  return ws.key("production", "rw");
}

beforeAll(async () => {
  quick = startTestSluice();
  tight = startTestSluice(undefined, { queryTimeoutMs: BUDGET_MS });
  [key, tightKey] = await Promise.all([load(quick), load(tight)]);
}, 60_000);
afterAll(async () => {
  for (const t of [quick, tight]) {
    await t.close();
    removeDir(t.dir);
  }
});

test("while a full scan runs, GET /healthz, POST /logs and another read are answered before it ends; the scan still answers exactly", async () => {
  let scanEnded = 0;
  const t0 = performance.now();
  const scan = quick.call("POST", `${WS}/logs/query`, { key, body: SLOW }).then((r) => {
    scanEnded = performance.now();
    return r;
  });
  await Bun.sleep(5); // fires at the scan's first pause: it is under way
  expect(scanEnded).toBe(0);
  const health = await quick.call("GET", "/healthz");
  const healthAt = performance.now();
  const write = await quick.call("POST", `${WS}/logs`, { key, body: entry({ message: "written during a scan" }) });
  const writeAt = performance.now();
  const read = await quick.call("GET", `${WS}/logs?pageSize=10`, { key });
  const readAt = performance.now();
  const scanned = await scan;
  expect({ health: health.status, write: write.status, read: read.status, scan: scanned.status }).toEqual({ health: 200, write: 201, read: 200, scan: 200 });
  expect(await scanned.json()).toEqual([]);
  expect(((await read.json()) as { message: string }[])[0].message).toBe("written during a scan");
  // each answered before the scan ended (printed, so that a failure shows how far apart they were)
  const at = (ms: number) => Math.round(ms - t0);
  expect({ health: at(healthAt) < at(scanEnded), write: at(writeAt) < at(scanEnded), read: at(readAt) < at(scanEnded) }).toEqual({
    health: true,
    write: true,
    read: true,
  });
  console.log(`scan ended at ${at(scanEnded)} ms; /healthz answered at ${at(healthAt)} ms, the write at ${at(writeAt)} ms, the read at ${at(readAt)} ms`);
});

test.each([
  ["POST /logs/query", "POST", `${WS}/logs/query`, SLOW],
  ["GET /logs", "GET", `${WS}/logs?message=zq`, undefined],
])(
  "%s past its time budget answers 400 VALIDATION_QUERY_CONSTRAINT, details {reason: time_budget, budget_ms}, saying how to narrow it",
  async (_, method, path, body) => {
    const r = await tight.call(method, path, { key: tightKey, body });
    expect(r.status).toBe(400);
    const got = (await r.json()) as { error_code: string; message: string; details: unknown };
    expect({ code: got.error_code, details: got.details }).toEqual({
      code: "VALIDATION_QUERY_CONSTRAINT",
      details: { reason: "time_budget", budget_ms: BUDGET_MS },
    });
    expect(got.message).toMatch(/time budget of 15 ms.*narrow it: a shorter from\/to range, or a term an index answers \(level=, tag=, action=/);
  },
);

test("under the same budget, a read an index answers, and the latest page, answer 200", async () => {
  for (const body of [{}, { query: "level=info" }, { query: "tag=shop", pageSize: 100 }]) {
    const r = await tight.call("POST", `${WS}/logs/query`, { key: tightKey, body });
    expect({ body, status: r.status }).toEqual({ body, status: 200 });
  }
});

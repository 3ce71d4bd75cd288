// Retention (contract §8): reads stop at the plan's horizon to the millisecond (the sweeper: limits-retention-sweeper.test.ts).
import { afterEach, describe, expect, test } from "bun:test";
import { BUILT_IN_PLANS, type Plan } from "../../src/limits/plans.ts";
import { WS, entry, removeDir, startTestSluice, type TestSluice } from "../helpers/sluice.ts";

const T0 = Date.parse("2026-11-10T12:00:00.000Z");
const DAY = 86_400_000;
const unlimited = BUILT_IN_PLANS.find((p) => p.code === "unlimited")!;
/** a plan that keeps one day and limits nothing else, for writing many entries quickly */
const ONE_DAY: Plan = { ...unlimited, code: "one-day", log_retention_days: 1 };
const PLANS = [...BUILT_IN_PLANS, ONE_DAY];

let now = T0;
let s: TestSluice | undefined;
/** open starts a fresh Sluice whose clock reads `now`, reset to T0. */
function open() {
  now = T0;
  s = startTestSluice(undefined, { clock: () => now, plans: PLANS, ipRatePerMinute: -1 });
  return { s };
}
afterEach(async () => {
  if (!s) return;
  await s.close();
  removeDir(s.dir);
  s = undefined;
});

const get = (t: TestSluice, path: string, key: string) => t.call("GET", `${WS}${path}`, { key });
const post = (t: TestSluice, path: string, key: string, body: unknown) => t.call("POST", `${WS}${path}`, { key, body });

/** visible tells, by every read, whether the key still sees entry id. */
async function visible(t: TestSluice, key: string, id: string) {
  const listed = ((await (await get(t, "/logs?pageSize=100", key)).json()) as { id: string }[]).some((e) => e.id === id);
  const queried = ((await (await post(t, "/logs/query", key, { query: "" })).json()) as { id: string }[]).some((e) => e.id === id);
  const byId = (await get(t, `/logs/${id}`, key)).status;
  return { listed, queried, byId };
}

describe("the retention horizon", () => {
  const rows = BUILT_IN_PLANS.map((p) => [p.code, p.log_retention_days] as const);
  test.each(rows)("on the %s plan (%i days) an entry is read at exactly the horizon and not 1 ms later, before any sweep", async (plan, days) => {
    const { s } = open();
    const key = await (await s.workspace(plan)).key("development", "rw");
    const written = await (await post(s, "/logs", key, entry())).json();
    expect(written.server_timestamp).toBe(new Date(T0).toISOString());

    now = T0 + days * DAY;
    expect(await visible(s, key, written.id)).toEqual({ listed: true, queried: true, byId: 200 });
    now += 1;
    expect(await visible(s, key, written.id)).toEqual({ listed: false, queried: false, byId: 404 });
    const gone = await (await get(s, `/logs/${written.id}`, key)).json();
    expect(gone.error_code).toBe("LOG_NOT_FOUND");
  });

  test("a read with an explicit `from` before the horizon still stops at the horizon", async () => {
    const { s } = open();
    const key = await (await s.workspace("free")).key("development", "rw");
    expect((await post(s, "/logs", key, entry({ action: "old" }))).status).toBe(201);
    now = T0 + DAY;
    const fresh = await (await post(s, "/logs", key, entry({ action: "fresh" }))).json();
    now = T0 + 21 * DAY + 1;
    const from = encodeURIComponent(new Date(T0 - DAY).toISOString());
    const listed = (await (await get(s, `/logs?from=${from}`, key)).json()) as { id: string }[];
    expect(listed.map((e) => e.id)).toEqual([fresh.id]);
    const queried = (await (await post(s, "/logs/query", key, { query: `timestamp<=${new Date(T0).toISOString()}` })).json()) as unknown[];
    expect(queried).toEqual([]);
  });
});

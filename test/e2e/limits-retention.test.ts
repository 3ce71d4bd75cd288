// Retention (contract §8): reads stop at the plan's horizon to the millisecond (the sweeper: limits-retention-sweeper.test.ts).
import { describe, expect, test } from "bun:test";
import { BUILT_IN_PLANS } from "../../src/limits/plans.ts";
import { DAY, T0, retentionSluices } from "../helpers/retention.ts";
import { WS, entry, type TestSluice } from "../helpers/sluice.ts";

const { clock, open } = retentionSluices();

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
    const s = open();
    const key = await (await s.workspace(plan)).key("development", "rw");
    const written = await (await post(s, "/logs", key, entry())).json();
    expect(written.server_timestamp).toBe(new Date(T0).toISOString());

    clock.now = T0 + days * DAY;
    expect(await visible(s, key, written.id)).toEqual({ listed: true, queried: true, byId: 200 });
    clock.now += 1;
    expect(await visible(s, key, written.id)).toEqual({ listed: false, queried: false, byId: 404 });
    const gone = await (await get(s, `/logs/${written.id}`, key)).json();
    expect(gone.error_code).toBe("LOG_NOT_FOUND");
  });

  test("a read with an explicit `from` before the horizon still stops at the horizon", async () => {
    const s = open();
    const key = await (await s.workspace("free")).key("development", "rw");
    expect((await post(s, "/logs", key, entry({ action: "old" }))).status).toBe(201);
    clock.now = T0 + DAY;
    const fresh = await (await post(s, "/logs", key, entry({ action: "fresh" }))).json();
    clock.now = T0 + 21 * DAY + 1;
    const from = encodeURIComponent(new Date(T0 - DAY).toISOString());
    const listed = (await (await get(s, `/logs?from=${from}`, key)).json()) as { id: string }[];
    expect(listed.map((e) => e.id)).toEqual([fresh.id]);
    const queried = (await (await post(s, "/logs/query", key, { query: `timestamp<=${new Date(T0).toISOString()}` })).json()) as unknown[];
    expect(queried).toEqual([]);
  });
});

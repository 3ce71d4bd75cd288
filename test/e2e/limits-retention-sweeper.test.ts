// Retention (contract §8): the sweeper of one process's store deletes entries past the horizon and their space is reused.
// It drives that store's RetentionSweeper and reads its file size: one process's internals (each cluster copy sweeps on its own).
import { describe, expect, test } from "bun:test";
import { PlanTable } from "../../src/limits/plans.ts";
import { RetentionSweeper } from "../../src/storage/retention.ts";
import { DAY, PLANS, T0, retentionSluices } from "../helpers/retention.ts";
import { WS, entry, type TestSluice } from "../helpers/sluice.ts";

const { clock, open: start } = retentionSluices();
/** open starts a fresh Sluice (retentionSluices) with a sweeper on the same clock. */
function open() {
  const s = start();
  return {
    s,
    sweeper: new RetentionSweeper(
      s.svc.entries,
      s.svc.meta,
      (ws, nowMs) => new PlanTable(PLANS).retentionFloor(ws.plan, nowMs),
      () => clock.now,
    ),
  };
}

const get = (t: TestSluice, path: string, key: string) => t.call("GET", `${WS}${path}`, { key });
const post = (t: TestSluice, path: string, key: string, body: unknown) => t.call("POST", `${WS}${path}`, { key, body });

describe("the retention sweeper", () => {
  test("deletes an entry only once it is older than its workspace plan's horizon, keeping newer ones and other plans' entries", async () => {
    const { s, sweeper } = open();
    const free = await s.workspace("free");
    const freeKey = await free.key("development", "rw");
    const keeper = await s.workspace("developer");
    const keeperKey = await keeper.key("staging", "rw");

    const old = await (await post(s, "/logs", freeKey, entry({ action: "old" }))).json();
    const longLived = await (await post(s, "/logs", keeperKey, entry({ action: "kept 45 days" }))).json();
    clock.now = T0 + 3_600_000;
    const newer = await (await post(s, "/logs", freeKey, entry({ action: "newer" }))).json();
    const present = () => ({
      old: s.svc.entries.get({ ws: free.id, env: "development" }, old.id) !== undefined,
      newer: s.svc.entries.get({ ws: free.id, env: "development" }, newer.id) !== undefined,
      longLived: s.svc.entries.get({ ws: keeper.id, env: "staging" }, longLived.id) !== undefined,
    });

    clock.now = T0 + 21 * DAY;
    expect(await sweeper.sweep()).toBe(0);
    expect(present()).toEqual({ old: true, newer: true, longLived: true });

    clock.now = T0 + 21 * DAY + 1;
    expect(await sweeper.sweep()).toBe(1);
    expect(present()).toEqual({ old: false, newer: true, longLived: true });
    expect((await get(s, `/logs/${newer.id}`, freeKey)).status).toBe(200);

    clock.now = T0 + 3_600_000 + 21 * DAY + 1;
    expect(await sweeper.sweep()).toBe(1);
    expect(present()).toEqual({ old: false, newer: false, longLived: true });
  });

  test("sweeps every environment of a workspace, and bulk blocks whole", async () => {
    const { s, sweeper } = open();
    const ws = await s.workspace("one-day");
    const keys = [await ws.key("development", "rw"), await ws.key("staging", "rw"), await ws.key("production", "rw")];
    for (const key of keys)
      expect(
        (
          await post(
            s,
            "/logs/bulk",
            key,
            Array.from({ length: 1_500 }, () => entry()),
          )
        ).status,
      ).toBe(201);
    clock.now = T0 + DAY + 1;
    expect(await sweeper.sweep()).toBe(4_500);
    expect(await sweeper.sweep()).toBe(0);
  });

  test("the space of swept entries is reused: a second round of the same writes grows the file by under 20%", async () => {
    const { s, sweeper } = open();
    const key = await (await s.workspace("one-day")).key("development", "rw");
    const payload = Array.from({ length: 1_000 }, (_, i) => entry({ message: `entry ${i} ${"x".repeat(200)}`, metadata: { i } }));
    const round = async () => {
      for (let i = 0; i < 20; i++) {
        expect((await post(s, "/logs/bulk", key, payload)).status).toBe(201);
        clock.now += 10;
      }
      return (s.dbs.root.getStats() as { lastPageNumber: number }).lastPageNumber;
    };
    const first = await round();
    clock.now += 2 * DAY;
    expect(await sweeper.sweep()).toBe(20_000);
    const second = await round();
    expect(second).toBeLessThanOrEqual(first * 1.2);
    // and the space of entries never swept is not: a third round without a sweep grows the file
    const third = await round();
    expect(third).toBeGreaterThan(second * 1.5);
  });
});

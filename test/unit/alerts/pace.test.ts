// RoundPace (contract §16, an evaluation never delays writes): a round's pause lets the writes under way commit and
// be answered before its next slice, and waits no longer than its bound when writes never stop. The writes are a real
// InFlight; the clock is the test's, so the bound does not depend on how fast the machine is.
import { expect, test } from "bun:test";
import { RoundPace } from "../../../src/alerts/pace.ts";
import { InFlight } from "../../../src/storage/inflight.ts";

const tenant = { ws: "w", env: "production" as const };

test("an evaluation never delays writes: a round's pause waits for the writes under way", async () => {
  const writes = new InFlight();
  let commit = () => {};
  writes.track(tenant, { ms: 1, id: "a" }, new Promise<void>((resolve) => (commit = resolve)));
  const pace = new RoundPace(writes, 1, () => 0);
  let resumed = false;
  const paused = pace.pause().then(() => (resumed = true));
  await Bun.sleep(30); // past the bound in real time: the pace keeps to its own clock
  expect(resumed).toBe(false);
  commit();
  await paused;
  expect(writes.busy()).toBe(false);
});

test("an evaluation never delays writes: under writes that never settle, a round's pause ends at its bound", async () => {
  const writes = new InFlight();
  writes.track(tenant, { ms: 1, id: "a" }, new Promise<void>(() => {}));
  let now = 0;
  const pace = new RoundPace(writes, 1, () => now);
  const paused = pace.pause();
  await Bun.sleep(5);
  now = 1000;
  await paused;
  expect(writes.busy()).toBe(true);
  expect(pace.due()).toBe(false); // a fresh slice
});

// Retention tests' setup, shared by limits-retention*.test.ts: a Sluice on a clock the test moves, with a plan that keeps one day.
import { afterEach } from "bun:test";
import { BUILT_IN_PLANS, type Plan } from "../../src/limits/plans.ts";
import { removeDir, startTestSluice, type TestSluice } from "./sluice.ts";

export const T0 = Date.parse("2026-11-10T12:00:00.000Z");
export const DAY = 86_400_000;
const unlimited = BUILT_IN_PLANS.find((p) => p.code === "unlimited")!;
/** a plan that keeps one day and limits nothing else, for writing many entries quickly */
const ONE_DAY: Plan = { ...unlimited, code: "one-day", log_retention_days: 1 };
/** PLANS are the built-in plans and `one-day` */
export const PLANS = [...BUILT_IN_PLANS, ONE_DAY];

/**
 * retentionSluices gives the calling test file a clock (`clock.now`, epoch ms, which its tests move) and open(), which
 * starts a fresh Sluice on PLANS whose clock reads clock.now, reset to T0; it is closed and removed after each test.
 */
export function retentionSluices() {
  const clock = { now: T0 };
  let s: TestSluice | undefined;
  afterEach(async () => {
    if (!s) return;
    await s.close();
    removeDir(s.dir);
    s = undefined;
  });
  return {
    clock,
    open(): TestSluice {
      clock.now = T0;
      s = startTestSluice(undefined, { clock: () => clock.now, plans: PLANS, ipRatePerMinute: -1 });
      return s;
    },
  };
}

// A plan's requests per minute are shared among the live front nodes (contract §13); the quota stays whole.
import { expect, test } from "bun:test";
import { SharedPlans, share } from "../../../src/cluster/plans.ts";
import { PlanTable } from "../../../src/limits/plans.ts";

test("a per-minute figure is divided among the live fronts, rounded up, never below 1; none (-1) stays none", () => {
  expect(share(600, 3)).toBe(200);
  expect(share(100, 3)).toBe(34);
  expect(share(2, 5)).toBe(1);
  expect(share(-1, 3)).toBe(-1);
  expect(share(600, 1)).toBe(600);
  expect(share(600, 0)).toBe(600);
});

test("SharedPlans divides only the rate figures, and follows the count of live fronts", () => {
  const table = new PlanTable();
  const plans = new SharedPlans(table);
  const code = table.codes().find((c) => table.get(c).requests_per_minute > 0)!;
  const whole = table.get(code);
  expect(plans.get(code)).toEqual(whole);
  plans.setFronts(3);
  expect(plans.get(code)).toEqual({
    ...whole,
    requests_per_minute: share(whole.requests_per_minute, 3),
    validate_requests_per_minute: share(whole.validate_requests_per_minute, 3),
  });
  expect(plans.get(code).logs_per_month).toBe(whole.logs_per_month);
  plans.setFronts(1);
  expect(plans.get(code)).toEqual(whole);
});

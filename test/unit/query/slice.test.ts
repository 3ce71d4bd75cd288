// TimeSlicer: a read's slices and its time budget, on a clock the test moves.
import { expect, test } from "bun:test";
import { ApiError } from "../../../src/errors.ts";
import { TimeSlicer } from "../../../src/query/slice.ts";

const clock = (start = 1000) => {
  const c = { now: start, read: () => c.now };
  return c;
};

test("a slice is due once its milliseconds have passed; a pause lets other tasks run and starts the next slice", async () => {
  const c = clock();
  const s = new TimeSlicer(1000, 5, c.read);
  c.now += 4.9;
  expect(s.due()).toBe(false);
  c.now += 0.1;
  expect(s.due()).toBe(true);
  let ran = false;
  setImmediate(() => (ran = true)); // queued before the pause: it runs during it
  await s.pause();
  expect(ran).toBe(true);
  expect(s.due()).toBe(false);
  c.now += 5;
  expect(s.due()).toBe(true);
});

test("the last slice ends at the budget, and a pause past it throws 400 VALIDATION_QUERY_CONSTRAINT with reason time_budget and budget_ms", async () => {
  const c = clock();
  const s = new TimeSlicer(12, 5, c.read);
  for (const step of [5, 5]) {
    c.now += step;
    expect(s.due()).toBe(true);
    await s.pause(); // within the budget: goes on
  }
  c.now += 1.9;
  expect(s.due()).toBe(false);
  c.now += 0.1; // 12 ms in: due before its 5 ms are up
  expect(s.due()).toBe(true);
  const e = await s.pause().then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ApiError);
  const { status, code, details, message } = e as ApiError;
  expect({ status, code, details }).toEqual({ status: 400, code: "VALIDATION_QUERY_CONSTRAINT", details: { reason: "time_budget", budget_ms: 12 } });
  expect(message).toMatch(/time budget of 12 ms.*; narrow it: .*from\/to.*level=, tag=, action=/);
});

test("the time a read spends paused counts towards its budget", async () => {
  const c = clock();
  const s = new TimeSlicer(20, 5, c.read);
  c.now += 5;
  const pausing = s.pause();
  c.now += 30; // other requests ran long meanwhile
  await pausing;
  expect(s.due()).toBe(true);
  expect(
    await s.pause().then(
      () => "went on",
      () => "stopped",
    ),
  ).toBe("stopped");
});

// Contract §8: in a plans file, -1 means "none" for every figure — no limit of that kind at all.
import { afterAll, expect, test } from "bun:test";
import { entry, removeDir, startTestSluice, WS } from "../helpers/sluice.ts";

const NONE = {
  code: "boundless",
  logs_per_month: -1,
  log_retention_days: -1,
  requests_per_minute: -1,
  validate_requests_per_minute: -1,
  max_log_size: -1,
  max_batch_size: -1,
  max_metadata_depth: -1,
  max_tags: -1,
};
const s = startTestSluice(undefined, { plans: [NONE], ipRatePerMinute: -1 });
afterAll(async () => {
  await s.close();
  removeDir(s.dir);
});

test("a plan with -1 for every figure stores a large batch of large, deeply nested, many-tagged entries", async () => {
  const key = await (await s.workspace("boundless")).key("development", "rw");
  let deep: Record<string, unknown> = { leaf: 1 };
  for (let i = 0; i < 40; i++) deep = { nested: deep };
  const big = entry({ message: "x".repeat(200_000), tags: Array.from({ length: 300 }, (_, i) => `t${i}`), metadata: deep });
  const batch = Array.from({ length: 12_000 }, () => entry());
  batch[0] = big;
  const r = await s.call("POST", `${WS}/logs/bulk`, { key, body: batch });
  expect(r.status).toBe(201);
  expect((await r.json()).count).toBe(12_000);
  const v = await s.call("POST", `${WS}/logs/validate`, { key, body: [big, big] });
  expect(await v.json()).toEqual({ valid: true, warnings: [], errors: [] });
  const usage = await (await s.call("GET", `${WS}/usage`, { key })).json();
  expect(usage).toMatchObject({ used: 12_000, limit: -1, remaining: -1 });
  const old = await s.call("POST", `${WS}/logs/query`, { key, body: { query: "tag=t299" } });
  expect((await old.json()).length).toBe(1);
});

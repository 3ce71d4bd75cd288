// The ingest worker: a large bulk body is checked and encoded on the worker exactly as inline, errors included.
import { expect, test } from "bun:test";
import { ApiError } from "../../../src/errors.ts";
import { JsonScan, escapesSurrogate } from "../../../src/ingest/scan.ts";
import { prepareBatch } from "../../../src/ingest/prepare.ts";
import { Preparer, WORKER_MIN_BYTES } from "../../../src/ingest/preparer.ts";
import { BUILT_IN_PLANS } from "../../../src/limits/plans.ts";
import { entry } from "../../helpers/sluice.ts";

const plan = BUILT_IN_PLANS.find((p) => p.code === "unlimited")!;
/** bytesOf is a body as readJsonBody hands it on: its bytes and the scan's bounds. */
const bytesOf = (body: unknown) => {
  const bytes = new TextEncoder().encode(JSON.stringify(body));
  const scan = new JsonScan(64);
  scan.feed(bytes);
  return { bytes, bounds: scan.entryBounds(escapesSurrogate(bytes)) };
};
const copy = (b: ReturnType<typeof bytesOf>) => ({ bytes: b.bytes.slice(), bounds: b.bounds });
const large = (over: (i: number) => Record<string, unknown>) =>
  bytesOf(Array.from({ length: 1_500 }, (_, i) => entry({ message: `entry ${i} ${"y".repeat(100)}`, tags: [`t${i % 7}`], ...over(i) })));
const caught = async (f: () => unknown) => {
  try {
    await f();
  } catch (e) {
    return e;
  }
  throw new Error("expected a throw");
};
const plain = (e: unknown) => {
  const a = e as ApiError;
  return { isApiError: a instanceof ApiError, status: a.status, code: a.code, message: a.message, details: a.details };
};

test("a large body prepared on the worker equals the same body prepared inline", async () => {
  const bytes = large((i) => ({ action: `act.${i % 30}`, metadata: i % 4 ? null : { n: i } }));
  expect(bytes.bytes.byteLength).toBeGreaterThan(WORKER_MIN_BYTES);
  const inline = prepareBatch(bytes, plan, "development");
  const onWorker = await new Preparer().prepare(copy(bytes), plan, "development");
  expect(onWorker.count).toBe(1_500);
  expect(onWorker.blocks.map((b) => b.size)).toEqual([1_000, 500]);
  expect(onWorker).toEqual(inline);
});

test("a large invalid body gets the same ApiError from the worker as inline: every entry problem, and the environment 403", async () => {
  const bad = large((i) => (i % 500 === 3 ? { level: "loud" } : {}));
  const inline = await caught(() => prepareBatch(bad, plan, "development"));
  const onWorker = await caught(() => new Preparer().prepare(copy(bad), plan, "development"));
  expect(plain(onWorker)).toEqual(plain(inline));
  expect(plain(onWorker)).toMatchObject({ isApiError: true, status: 400, code: "VALIDATION_FAILED" });
  expect((plain(onWorker).details as { errors: unknown[] }).errors.length).toBe(3);

  const otherEnv = large((i) => (i === 1_200 ? { environment: "production" } : {}));
  const forbidden = await caught(() => new Preparer().prepare(otherEnv, plan, "development"));
  expect(plain(forbidden)).toEqual(
    plain(
      await caught(() =>
        prepareBatch(
          large((i) => (i === 1_200 ? { environment: "production" } : {})),
          plan,
          "development",
        ),
      ),
    ),
  );
  expect(plain(forbidden).status).toBe(403);
});

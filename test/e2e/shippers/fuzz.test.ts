// Contract §11, bad input on every shipper route: truncated protobuf, wrong wire types, huge varints, bad snappy,
// nested JSON bombs, invalid UTF-8, broken gzip. Never a 5xx, never a crash, and a request answered as failed
// (anything but OTLP's 200, Loki's 204 or 400 with its text list, ES's 200) stores nothing. FUZZ_SEED replays a run.
import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import { gzipSync } from "node:zlib";
import { compressSync } from "snappy";
import { ExportLogsServiceRequest, PushRequest } from "../../../src/ingest/protocols/schemas.ts";
import { BUILT_IN_PLANS, type Plan } from "../../../src/limits/plans.ts";
import { removeDir, startTestSluice, WS, type TestSluice } from "../../helpers/sluice.ts";

const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
const RUNS = 150;

let s: TestSluice;
let key: string;
/** small entries and no request limit: many entries get rejected, and the fuzzing never meets a 429 */
const FUZZ_PLAN: Plan = { ...BUILT_IN_PLANS[1], code: "fuzz", requests_per_minute: -1, validate_requests_per_minute: -1, logs_per_month: -1 };
beforeAll(async () => {
  s = startTestSluice(undefined, { plans: [...BUILT_IN_PLANS, FUZZ_PLAN], ipRatePerMinute: -1 });
  key = await (await s.workspace("fuzz")).key("development", "rw");
});
afterAll(async () => {
  await s.close();
  removeDir(s.dir);
});

const used = async () => ((await (await s.call("GET", `${WS}/usage`, { key })).json()) as { used: number }).used;

/** post sends one body to a route and checks the rules above; it returns the status. */
async function post(path: string, contentType: string, body: Uint8Array | string, headers: Record<string, string> = {}): Promise<number> {
  const before = await used();
  const r = await s.app.handle(
    new Request(`http://localhost${path}`, { method: "POST", headers: { "x-api-key": key, "content-type": contentType, ...headers }, body }),
  );
  const text = await r.text();
  expect(r.status).toBeLessThan(500);
  const failed = r.status >= 400 && !(path.startsWith("/loki") && r.status === 400 && r.headers.get("content-type")?.startsWith("text/plain"));
  if (failed) {
    expect(JSON.parse(text).error_code).toBeString();
    expect(await used()).toBe(before);
  }
  return r.status;
}

const T = `${Date.parse("2026-11-22T10:00:00Z")}000000`;
const otlp = Buffer.from(
  ExportLogsServiceRequest.encode(
    ExportLogsServiceRequest.fromObject({
      resourceLogs: [
        {
          resource: { attributes: [{ key: "service.name", value: { stringValue: "svc" } }] },
          scopeLogs: [
            {
              scope: { name: "s" },
              logRecords: [
                { timeUnixNano: T, severityNumber: 9, body: { stringValue: "one" }, attributes: [{ key: "a.b", value: { intValue: 1 } }] },
                {
                  timeUnixNano: T,
                  severityNumber: 17,
                  body: { kvlistValue: { values: [{ key: "k", value: { arrayValue: { values: [{ doubleValue: 1.5 }] } } }] } },
                },
              ],
            },
          ],
        },
      ],
    }),
  ).finish(),
);
const lokiRaw = Buffer.from(
  PushRequest.encode(
    PushRequest.fromObject({
      streams: [{ labels: '{job="x"}', entries: [{ timestamp: { seconds: 1795341600, nanos: 5 }, line: '{"msg":"m","level":"warn"}' }] }],
    }),
  ).finish(),
);
const loki = compressSync(lokiRaw);

/** mutations of valid bytes: truncated, a byte changed, a huge varint spliced in, a wrong wire type, or random bytes */
const mutated = (valid: Uint8Array) =>
  fc.oneof(
    fc.integer({ min: 0, max: valid.length }).map((n) => valid.subarray(0, n)),
    fc.tuple(fc.integer({ min: 0, max: valid.length - 1 }), fc.integer({ min: 0, max: 255 })).map(([at, b]) => {
      const copy = Buffer.from(valid);
      copy[at] = b;
      return copy;
    }),
    fc.integer({ min: 0, max: valid.length }).map((at) => Buffer.concat([valid.subarray(0, at), Buffer.alloc(12, 0xff), valid.subarray(at)])),
    fc.integer({ min: 0, max: valid.length - 1 }).map((at) => {
      const copy = Buffer.from(valid);
      copy[at] = (copy[at] & ~7) | 7; // wire type 7 does not exist
      return copy;
    }),
    fc.uint8Array({ maxLength: 300 }),
  );

const bomb = (n: number) => "[".repeat(n) + "]".repeat(n);
const invalidUtf8 = Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xed, 0xa0, 0x80, 0x22, 0x7d]);
const jsonish = fc.oneof(
  fc.json({ maxDepth: 4 }),
  fc.constantFrom(
    bomb(100_000),
    `{"resourceLogs":${bomb(5000)}}`,
    `{"streams":[{"stream":{},"values":${bomb(5000)}}]}`,
    "",
    "{",
    "null",
    "[]",
    '{"streams":5}',
  ),
  fc.constant(invalidUtf8),
);

test("OTLP protobuf: mutated requests never answer 5xx, and a failed one stores nothing", async () => {
  expect(await post("/otlp/v1/logs", "application/x-protobuf", otlp)).toBe(200);
  await fc.assert(
    fc.asyncProperty(mutated(otlp), async (body) => void (await post("/otlp/v1/logs", "application/x-protobuf", body))),
    { numRuns: RUNS, seed: SEED },
  );
});

test("OTLP JSON: random JSON, bracket bombs and invalid UTF-8", async () => {
  await fc.assert(
    fc.asyncProperty(jsonish, async (body) => void (await post("/otlp/v1/logs", "application/json", body))),
    { numRuns: RUNS, seed: SEED },
  );
});

test("Loki protobuf: bad snappy, and mutated snappy-compressed requests", async () => {
  expect(await post("/loki/api/v1/push", "application/x-protobuf", loki)).toBe(204);
  const body = fc.oneof(
    mutated(loki),
    mutated(lokiRaw).map((b) => compressSync(Buffer.from(b))),
  );
  await fc.assert(
    fc.asyncProperty(body, async (b) => void (await post("/loki/api/v1/push", "application/x-protobuf", b))),
    { numRuns: RUNS, seed: SEED },
  );
});

test("Loki JSON: random JSON, bracket bombs and invalid UTF-8", async () => {
  await fc.assert(
    fc.asyncProperty(jsonish, async (body) => void (await post("/loki/api/v1/push", "application/json", body))),
    { numRuns: RUNS, seed: SEED },
  );
});

test("Elasticsearch bulk: random lines, bombs in documents, invalid UTF-8", async () => {
  const line = fc.oneof(
    fc.json({ maxDepth: 3 }),
    fc.constantFrom('{"create":{}}', '{"index":{"_index":"i"}}', '{"delete":{}}', '{"message":"m"}', bomb(20_000), "{"),
    fc.string({ unit: "binary", maxLength: 30 }),
  );
  const body = fc.oneof(
    fc.array(line, { maxLength: 8 }).map((ls) => `${ls.join("\n")}\n`),
    fc.constant(Buffer.concat([Buffer.from('{"create":{}}\n'), invalidUtf8, Buffer.from("\n")])),
  );
  await fc.assert(
    fc.asyncProperty(body, async (b) => void (await post("/es/_bulk", "application/x-ndjson", b))),
    { numRuns: RUNS, seed: SEED },
  );
});

test("gzip: truncated or corrupt compressed bodies on every route answer 400 and store nothing", async () => {
  const routes: [string, string, Uint8Array][] = [
    ["/otlp/v1/logs", "application/x-protobuf", otlp],
    ["/loki/api/v1/push", "application/x-protobuf", loki],
    ["/es/_bulk", "application/x-ndjson", Buffer.from('{"create":{}}\n{"message":"m"}\n')],
    [`${WS}/logs/bulk`, "application/json", Buffer.from('[{"action":"a","level":"info","clientTimestamp":"2026-11-22T10:00:00Z"}]')],
  ];
  for (const [path, type, body] of routes) expect([200, 201, 204]).toContain(await post(path, type, gzipSync(body), { "content-encoding": "gzip" }));
  const cases = fc.tuple(fc.constantFrom(...routes), fc.integer({ min: 1, max: 30 }));
  await fc.assert(
    fc.asyncProperty(cases, async ([[path, type, body], cut]) => {
      const gz = gzipSync(body);
      expect(await post(path, type, gz.subarray(0, Math.max(0, gz.length - cut)), { "content-encoding": "gzip" })).toBe(400);
    }),
    { numRuns: 40, seed: SEED },
  );
});

// Robustness of the exploring endpoints (contract §10): random and mistyped fields never give a 5xx; every refusal is
// a 400 (or 404 for context) with the JSON error body, VALIDATION_FAILED naming its field or a code of section 6.
import { afterAll, expect, test } from "bun:test";
import fc from "fast-check";
import { parseCursor } from "../../src/query/tail.ts";
import { removeDir, startTestSluice, WS, entry } from "../helpers/sluice.ts";

const s = startTestSluice(undefined, { ipRatePerMinute: -1 });
afterAll(async () => {
  await s.close();
  removeDir(s.dir);
});

const CODES = [
  "VALIDATION_FAILED",
  "VALIDATION_INVALID_REQUEST",
  "VALIDATION_QUERY_SYNTAX",
  "VALIDATION_QUERY_INVALID",
  "VALIDATION_QUERY_TIME_RANGE",
  "VALIDATION_QUERY_CONSTRAINT",
  "VALIDATION_INVALID_JSON",
  "LOG_NOT_FOUND",
];
const anyValue = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom(
    "5m",
    "0s",
    "1ms",
    "level",
    "tag",
    "metadata.x",
    "metadata.",
    "client",
    "server",
    "2026-11-22T10:00:00Z",
    "2026-11-22T10:00:01.5Z",
    "level=error",
    "level=",
  ),
  fc.integer({ min: -5, max: 2000 }),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.constantFrom("level", "action", "x", 1), { maxLength: 25 }),
  fc.object({ maxDepth: 1 }),
);
const body = fc.dictionary(fc.constantFrom("query", "from", "to", "step", "groupBy", "limit", "axis", "fields", "prefix", "other"), anyValue, { maxKeys: 6 });

test("random bodies to hits, facets and fields, and random parameters to context and tail, answer 200 or a clear 4xx (500 cases)", async () => {
  const ws = await s.workspace();
  const key = await ws.key("development", "rw");
  const ids = (
    (await (await s.call("POST", `${WS}/logs/bulk`, { key, body: [entry({ metadata: { x: 1 } }), entry({ tags: ["a"] })] })).json()) as { ids: string[] }
  ).ids;
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom("hits", "facets", "fields", "context", "tail"),
      body,
      fc.dictionary(
        fc.constantFrom("before", "after", "query", "backfill"),
        fc.oneof(fc.string({ maxLength: 10 }), fc.integer({ min: -2, max: 2000 }).map(String)),
        { maxKeys: 3 },
      ),
      fc.oneof(fc.constantFrom(...ids), fc.string({ maxLength: 40 })),
      async (route, b, params, id) => {
        const qs = new URLSearchParams(params).toString();
        const r =
          route === "context"
            ? await s.call("GET", `${WS}/logs/${encodeURIComponent(id)}/context?${qs}`, { key })
            : route === "tail"
              ? await s.call("GET", `${WS}/logs/tail?${qs}`, { key })
              : await s.call("POST", `${WS}/logs/${route}`, { key, body: b });
        if (r.status === 200) {
          await r.body?.cancel(); // a tail stays open otherwise
          return;
        }
        const err = (await r.json()) as { error_code: string; details?: { errors?: { field: string }[] } };
        expect({ route, status: r.status < 500, code: CODES.includes(err.error_code) }).toEqual({ route, status: true, code: true });
        if (err.error_code === "VALIDATION_FAILED") expect(err.details?.errors?.[0]?.field).toBeString();
      },
    ),
    { numRuns: 500 },
  );
}, 120_000);

test("a cursor is read back exactly, and any other text is no cursor (never a throw)", () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 80 }), (text) => {
      const k = parseCursor(text);
      if (k) expect(k.ms).toBeNumber();
    }),
    { numRuns: 2000 },
  );
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 253_402_300_799_999 }), fc.uuid({ version: 7 }), (ms, id) => {
      expect(parseCursor(`${new Date(ms).toISOString()}_${id}`)).toEqual({ ms, id });
    }),
  );
});

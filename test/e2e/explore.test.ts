// Exploring (contract §10): POST /logs/hits, /logs/facets, /logs/fields and GET /logs/{id}/context, rule by rule.
// Exactness over random data is test/property/explore-exactness.test.ts; live tails are test/e2e/tail.test.ts.
import { afterAll, describe, expect, test } from "bun:test";
import { BUILT_IN_PLANS, type Plan } from "../../src/limits/plans.ts";
import { WS, entry, removeDir, startTestSluice } from "../helpers/sluice.ts";

const DAY = 86_400_000;
// ids never go back in time within a process (ids.ts), so each test writes later than the one before: from its own T0
let T0 = Date.parse("2026-11-22T10:00:00.000Z");
let now = T0;
const ONE_DAY: Plan = { ...BUILT_IN_PLANS.find((p) => p.code === "unlimited")!, code: "one-day", log_retention_days: 1 };
const s = startTestSluice(undefined, { clock: () => now, plans: [...BUILT_IN_PLANS, ONE_DAY], ipRatePerMinute: -1 });
afterAll(async () => {
  await s.close();
  removeDir(s.dir);
});

const iso = (ms: number) => new Date(ms).toISOString();
async function tenant(plan = "unlimited") {
  T0 += 10 * DAY;
  now = T0;
  const ws = await s.workspace(plan);
  return { key: await ws.key("development", "rw"), ws };
}
async function write(key: string, at: number, bodies: Record<string, unknown>[]) {
  now = at;
  const r = await s.call("POST", `${WS}/logs/bulk`, { key, body: bodies.map((b) => entry(b)) });
  expect(r.status).toBe(201);
  return ((await r.json()) as { ids: string[] }).ids;
}
const post = async (key: string, path: string, body: unknown) => {
  const r = await s.call("POST", `${WS}/logs/${path}`, { key, body });
  return { status: r.status, body: (await r.json()) as any };
};
const field = (b: any) => b.details?.errors?.[0]?.field ?? b.details?.field;

describe("POST /logs/hits", () => {
  test("from and to are required, and from must be before to: VALIDATION_QUERY_TIME_RANGE", async () => {
    const { key } = await tenant();
    for (const body of [
      { to: iso(T0) },
      { from: iso(T0) },
      { from: iso(T0), to: iso(T0) },
      { from: iso(T0 + 1), to: iso(T0) },
      { from: "yesterday", to: iso(T0) },
    ]) {
      const r = await post(key, "hits", body);
      expect({ body, status: r.status, code: r.body.error_code }).toEqual({ body, status: 400, code: "VALIDATION_QUERY_TIME_RANGE" });
    }
  });

  test("the default step is the first of 1s … 7d that gives at most 120 buckets, else 7d", async () => {
    const { key } = await tenant();
    const cases: [number, number, number][] = [
      [T0, T0 + 120_000, 1000], // 120 one-second buckets
      [T0 + 500, T0 + 120_500, 5000], // unaligned: 1s would touch 121
      [T0, T0 + 3 * 3_600_000, 300_000], // 3 h: 180 minutes, 36 five-minute buckets
      [T0, T0 + 120 * 7 * DAY, 7 * DAY],
      [T0 - 400 * 7 * DAY, T0, 7 * DAY], // past 120 weeks: 7d all the same
    ];
    for (const [from, to, step] of cases) {
      const r = await post(key, "hits", { from: iso(from), to: iso(to) });
      expect({ from: iso(from), step: r.body.step_ms }).toEqual({ from: iso(from), step });
    }
  });

  test("a step of 0 or another spelling is VALIDATION_FAILED naming step; more than 1,000 buckets is VALIDATION_QUERY_CONSTRAINT", async () => {
    const { key } = await tenant();
    for (const step of ["0s", "0ms", "5", "5 m", "1w", "1.5s", "-1s", 5, "1S"]) {
      const r = await post(key, "hits", { from: iso(T0), to: iso(T0 + 60_000), step });
      expect({ step, status: r.status, code: r.body.error_code, field: field(r.body) }).toEqual({
        step,
        status: 400,
        code: "VALIDATION_FAILED",
        field: "step",
      });
    }
    expect((await post(key, "hits", { from: iso(T0), to: iso(T0 + 1000), step: "1ms" })).status).toBe(200); // 1,000 buckets
    const over = await post(key, "hits", { from: iso(T0), to: iso(T0 + 1001), step: "1ms" });
    expect([over.status, over.body.error_code]).toEqual([400, "VALIDATION_QUERY_CONSTRAINT"]);
    const huge = await post(key, "hits", { from: "0000-01-01T00:00:00.5Z", to: iso(T0), step: "999999999999999d" }); // a start before year 0000
    expect([huge.status, huge.body.error_code, field(huge.body)]).toEqual([400, "VALIDATION_FAILED", "step"]);
    const unaligned = await post(key, "hits", { from: iso(T0 + 500), to: iso(T0 + 1_000_600), step: "1s" }); // touches 1,001 aligned buckets
    expect([unaligned.status, unaligned.body.error_code]).toEqual([400, "VALIDATION_QUERY_CONSTRAINT"]);
  });

  test("buckets start at multiples of step since the epoch: the first holds from, the last to − 1 ms; only [from, to) counts", async () => {
    const { key } = await tenant();
    for (const at of [T0 + 999, T0 + 1000, T0 + 2999, T0 + 3000]) await write(key, at, [{}]);
    const r = await post(key, "hits", { from: iso(T0 + 1000), to: iso(T0 + 3000), step: "2s" });
    expect(r.body).toMatchObject({ from: iso(T0 + 1000), to: iso(T0 + 3000), step_ms: 2000, axis: "server", buckets: [iso(T0), iso(T0 + 2000)], total: 2 });
    expect(r.body.series).toEqual([{ group: null, counts: [1, 1], total: 2 }]);
    expect(r.body.other).toBeNull();
  });

  test("axis client buckets and bounds by client_timestamp; lists keep server order", async () => {
    const { key } = await tenant();
    await write(key, T0, [{ clientTimestamp: iso(T0 - 60_000) }, { clientTimestamp: iso(T0 + 60_000) }]);
    const server = await post(key, "hits", { from: iso(T0 - 120_000), to: iso(T0 + 120_000), step: "1m" });
    const client = await post(key, "hits", { from: iso(T0 - 120_000), to: iso(T0 + 120_000), step: "1m", axis: "client" });
    expect(server.body.series[0].counts).toEqual([0, 0, 2, 0]);
    expect(client.body).toMatchObject({ axis: "client", series: [{ counts: [0, 1, 0, 1], total: 2 }] });
    const bad = await post(key, "hits", { from: iso(T0), to: iso(T0 + 1), axis: "Client" });
    expect([bad.status, bad.body.error_code, field(bad.body)]).toEqual([400, "VALIDATION_FAILED", "axis"]);
  });

  test("groupBy: text forms, the null group written {field: null} after texts on ties, limit keeps the top totals, the rest in other", async () => {
    const { key } = await tenant();
    await write(key, T0, [
      { metadata: { status: 500 } },
      { metadata: { status: "500" } },
      { metadata: { status: true } },
      { metadata: { status: { a: 1 } } },
      { metadata: { status: [1] } },
      { metadata: { status: null } },
      { metadata: null },
      { metadata: { status: 404 } },
      { metadata: { status: 404 } },
    ]);
    const r = await post(key, "hits", { from: iso(T0), to: iso(T0 + 1000), step: "1s", groupBy: "metadata.status", limit: 2 });
    expect(r.body.series).toEqual([
      { group: { "metadata.status": null }, counts: [4], total: 4 },
      { group: { "metadata.status": "404" }, counts: [2], total: 2 }, // ties with "500" (500 and "500"): by text
    ]);
    expect(r.body.other).toEqual({ counts: [3], total: 3 });
    expect(r.body.total).toBe(9);
    const ties = await post(key, "hits", { from: iso(T0), to: iso(T0 + 1000), step: "1s", groupBy: "metadata.status", limit: 100 });
    expect(ties.body.series.map((g: any) => g.group["metadata.status"])).toEqual([null, "404", "500", "true"]);
    expect(ties.body.other).toBeNull();
  });

  test("groupBy tag counts an entry once per tag and once in null when it has none; environment is the key's", async () => {
    const { key } = await tenant();
    await write(key, T0, [{ tags: ["a", "b"] }, { tags: ["a"] }, { tags: [] }]);
    const tags = await post(key, "hits", { from: iso(T0), to: iso(T0 + 1000), step: "1s", groupBy: "tag" });
    expect(tags.body.series).toEqual([
      { group: { tag: "a" }, counts: [2], total: 2 },
      { group: { tag: "b" }, counts: [1], total: 1 },
      { group: { tag: null }, counts: [1], total: 1 },
    ]);
    expect(tags.body.total).toBe(3);
    const env = await post(key, "hits", { from: iso(T0), to: iso(T0 + 1000), step: "1s", groupBy: "environment" });
    expect(env.body.series).toEqual([{ group: { environment: "development" }, counts: [3], total: 3 }]);
  });

  test("a bad groupBy or limit is VALIDATION_FAILED naming it; a bad query answers the codes of section 6", async () => {
    const { key } = await tenant();
    const base = { from: iso(T0), to: iso(T0 + 1000) };
    for (const groupBy of ["levels", "metadata", "metadata.", "metadata..x", "foo.bar", 5, ""]) {
      const r = await post(key, "hits", { ...base, groupBy });
      expect({ groupBy, status: r.status, code: r.body.error_code, field: field(r.body) }).toEqual({
        groupBy,
        status: 400,
        code: "VALIDATION_FAILED",
        field: "groupBy",
      });
    }
    for (const limit of [0, 101, 1.5, "5"]) {
      const r = await post(key, "hits", { ...base, groupBy: "level", limit });
      expect({ limit, code: r.body.error_code, field: field(r.body) }).toEqual({ limit, code: "VALIDATION_FAILED", field: "limit" });
    }
    expect((await post(key, "hits", { ...base, query: "level=" })).body.error_code).toBe("VALIDATION_QUERY_SYNTAX");
    expect((await post(key, "hits", { ...base, query: "nosuch=1" })).body.error_code).toBe("VALIDATION_QUERY_INVALID");
    expect((await post(key, "hits", { ...base, query: 5 })).body.error_code).toBe("VALIDATION_FAILED");
    expect((await post(key, "hits", { ...base, query: "x ".repeat(1001) })).body.error_code).toMatch(/^VALIDATION_QUERY_/);
    expect((await post(key, "hits", [])).body.error_code).toBe("VALIDATION_INVALID_REQUEST");
  });

  test("more than 10,000 distinct groups in the range is VALIDATION_QUERY_CONSTRAINT", async () => {
    const { key } = await tenant();
    await write(
      key,
      T0,
      Array.from({ length: 10_000 }, (_, n) => ({ metadata: { n } })),
    );
    const base = { from: iso(T0), to: iso(T0 + 1000), groupBy: "metadata.n" };
    expect((await post(key, "hits", base)).body.series).toHaveLength(10);
    await write(key, T0 + 1, [{ metadata: { n: -1 } }]);
    const r = await post(key, "hits", base);
    expect([r.status, r.body.error_code]).toEqual([400, "VALIDATION_QUERY_CONSTRAINT"]);
  });

  test("the key's environment, its permission and its plan's retention bound the counts", async () => {
    const { key, ws } = await tenant("one-day");
    const staging = await ws.key("staging", "rw");
    const writeOnly = await ws.key("development", "wo");
    await write(key, T0, [{}]);
    await write(key, T0 + DAY, [{}]);
    now = T0 + DAY + 1;
    const range = { from: iso(T0 - DAY), to: iso(T0 + 2 * DAY), step: "1d" };
    expect((await post(key, "hits", range)).body.total).toBe(1); // the first is past the one-day horizon
    expect((await post(staging, "hits", range)).body.total).toBe(0);
    expect((await post(writeOnly, "hits", range)).status).toBe(403);
    expect((await s.call("POST", `${WS}/logs/hits`, { body: range })).status).toBe(401);
  });
});

describe("POST /logs/facets", () => {
  test("the default fields are level, action and tag; values by count then text; other, missing and distinct are exact", async () => {
    const { key } = await tenant();
    await write(key, T0, [
      { level: "error", action: "b", tags: ["x", "y"] },
      { level: "error", action: "a", tags: ["x"] },
      { level: "info", action: "a", tags: [] },
      { level: "warn", action: "c", tags: ["z"] },
    ]);
    const r = await post(key, "facets", { limit: 1 });
    expect(r.body).toEqual({
      total: 4,
      facets: [
        { field: "level", values: [{ value: "error", count: 2 }], other: 2, missing: 0, distinct: 3, too_many: false },
        { field: "action", values: [{ value: "a", count: 2 }], other: 2, missing: 0, distinct: 3, too_many: false },
        { field: "tag", values: [{ value: "x", count: 2 }], other: 2, missing: 1, distinct: 3, too_many: false },
      ],
    });
  });

  test("missing counts null, absent, object and array values; no value is not a value", async () => {
    const { key } = await tenant();
    await write(key, T0, [{ metadata: { s: null } }, { metadata: { s: {} } }, { metadata: { s: [] } }, {}, { metadata: { s: 1 } }, { metadata: { s: "1" } }]);
    const r = await post(key, "facets", { fields: ["metadata.s"], query: "", from: iso(T0), to: iso(T0 + 1) });
    expect(r.body.facets).toEqual([{ field: "metadata.s", values: [{ value: "1", count: 2 }], other: 0, missing: 4, distinct: 1, too_many: false }]);
  });

  test("fields must be 1 to 20 field names and limit 1 to 100: otherwise VALIDATION_FAILED naming them", async () => {
    const { key } = await tenant();
    for (const fields of [[], Array(21).fill("level"), "level", ["nope"], [1]]) {
      const r = await post(key, "facets", { fields });
      expect({ fields, code: r.body.error_code, field: field(r.body) }).toEqual({ fields, code: "VALIDATION_FAILED", field: "fields" });
    }
    expect(field((await post(key, "facets", { limit: 0 })).body)).toBe("limit");
    expect((await post(key, "facets", { from: iso(T0 + 1), to: iso(T0) })).body.error_code).toBe("VALIDATION_QUERY_TIME_RANGE");
  });

  test("a field with more than 100,000 distinct values answers too_many, missing still exact, other fields unaffected; fields reads at most 100,000", async () => {
    const { key } = await tenant();
    for (let k = 0; k < 10; k++)
      await write(
        key,
        T0 + k,
        Array.from({ length: 10_000 }, (_, n) => ({ level: "info", metadata: { n: k * 10_000 + n, m: 1 } })),
      );
    await write(key, T0 + 10, [{ level: "error", metadata: { n: -1 } }, { level: "error" }]);
    const r = await post(key, "facets", { fields: ["metadata.n", "level"], limit: 2 });
    expect(r.body.total).toBe(100_002);
    expect(r.body.facets[0]).toEqual({ field: "metadata.n", values: [], other: 100_001, missing: 1, distinct: null, too_many: true });
    expect(r.body.facets[1]).toEqual({
      field: "level",
      values: [
        { value: "info", count: 100_000 },
        { value: "error", count: 2 },
      ],
      other: 0,
      missing: 0,
      distinct: 2,
      too_many: false,
    });
    const f = await post(key, "fields", {});
    expect(f.body).toEqual({
      fields: [
        { field: "metadata.n", count: 99_999, types: ["number"] },
        { field: "metadata.m", count: 99_998, types: ["number"] },
      ],
      scanned: 100_000,
      complete: false,
    });
  }, 60_000);
});

describe("POST /logs/fields", () => {
  test("every leaf of actor, target, context and metadata through objects, not arrays, with counts and types, by count", async () => {
    const { key } = await tenant();
    await write(key, T0, [
      { metadata: { http: { status: 500, path: "/a" }, list: [{ a: 1 }] }, actor: { id: "u1" } },
      { metadata: { http: { status: "500" } }, context: { ip: null }, target: { flag: true } },
      { level: "error", metadata: { http: { status: 404 } } },
    ]);
    const r = await post(key, "fields", {});
    expect(r.body).toEqual({
      fields: [
        { field: "metadata.http.status", count: 3, types: ["number", "string"] },
        { field: "actor.id", count: 1, types: ["string"] },
        { field: "context.ip", count: 1, types: ["null"] },
        { field: "metadata.http.path", count: 1, types: ["string"] },
        { field: "metadata.list", count: 1, types: ["array"] },
        { field: "target.flag", count: 1, types: ["boolean"] },
      ],
      scanned: 3,
      complete: true,
    });
    const narrowed = await post(key, "fields", { prefix: "metadata.http", query: "level=error" });
    expect(narrowed.body).toEqual({ fields: [{ field: "metadata.http.status", count: 1, types: ["number"] }], scanned: 1, complete: true });
    expect(field((await post(key, "fields", { prefix: 5 })).body)).toBe("prefix");
  });
});

describe("GET /logs/{id}/context", () => {
  test("after ++ [entry] ++ before is a run of consecutive matching entries of the list, the entry always in it", async () => {
    const { key } = await tenant();
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push(...(await write(key, T0 + i * 10, [{ level: i % 2 ? "error" : "info", message: `n${i}` }, { level: "debug" }])));
    // the list, newest first: ids in reverse (one bulk's ids ascend)
    const list = [...ids].reverse();
    const at = ids[9]; // the debug entry of write 4
    const ctx = await s.call("GET", `${WS}/logs/${at}/context?before=3&after=2`, { key });
    const body = (await ctx.json()) as any;
    const run = [...body.after, body.entry, ...body.before].map((e: any) => e.id);
    const i = list.indexOf(at);
    expect(run).toEqual(list.slice(i - 2, i + 4));
    const q = await s.call("GET", `${WS}/logs/${at}/context?before=2&after=2&query=level%3Derror`, { key });
    const qb = (await q.json()) as any;
    expect(qb.entry.id).toBe(at); // returned though it does not match
    expect(qb.after.map((e: any) => e.message)).toEqual(["n7", "n5"]);
    expect(qb.before.map((e: any) => e.message)).toEqual(["n3", "n1"]);
    const none = (await (await s.call("GET", `${WS}/logs/${at}/context?before=0&after=0`, { key })).json()) as any;
    expect([none.after, none.before]).toEqual([[], []]);
    const dflt = (await (await s.call("GET", `${WS}/logs/${ids[0]}/context`, { key })).json()) as any;
    expect([dflt.after.length, dflt.before.length]).toEqual([19, 0]);
  });

  test("an unknown id, or one of another environment, is 404 LOG_NOT_FOUND; before and after are 0 to 100", async () => {
    const { key, ws } = await tenant();
    const [id] = await write(key, T0, [{}]);
    const staging = await ws.key("staging", "rw");
    for (const [k, path] of [
      [key, crypto.randomUUID()],
      [key, "nope"],
      [staging, id],
    ]) {
      const r = await s.call("GET", `${WS}/logs/${path}/context`, { key: k });
      expect([r.status, ((await r.json()) as any).error_code]).toEqual([404, "LOG_NOT_FOUND"]);
    }
    for (const [name, v] of [
      ["before", "101"],
      ["after", "-1"],
      ["before", "x"],
    ]) {
      const r = await s.call("GET", `${WS}/logs/${id}/context?${name}=${v}`, { key });
      const b = (await r.json()) as any;
      expect([r.status, b.error_code, field(b)]).toEqual([400, "VALIDATION_FAILED", name]);
    }
  });
});

describe("the OpenAPI document", () => {
  test("lists the five exploring endpoints with their request and answer shapes", async () => {
    const doc = (await (await s.call("GET", `${WS}/openapi.json`)).json()) as any;
    const op = (path: string, method: string) => doc.paths[`${WS}${path}`]?.[method];
    for (const [path, method] of [
      ["/logs/hits", "post"],
      ["/logs/facets", "post"],
      ["/logs/fields", "post"],
      ["/logs/{id}/context", "get"],
      ["/logs/tail", "get"],
    ]) {
      expect({ path, described: op(path, method)?.description?.includes("logs:read") }).toEqual({ path, described: true });
    }
    const schemaOf = (x: any) => (x.$ref ? doc.components.schemas[x.$ref.split("/").pop()] : x);
    expect(Object.keys(schemaOf(op("/logs/hits", "post").requestBody.content["application/json"].schema).properties).sort()).toEqual(
      ["axis", "from", "groupBy", "limit", "query", "step", "to"].sort(),
    );
    expect(Object.keys(op("/logs/hits", "post").responses[200].content["application/json"].schema.properties)).toContain("series");
    expect(
      op("/logs/tail", "get")
        .parameters.map((p: any) => p.name)
        .sort(),
    ).toEqual(["after", "backfill", "query"]);
    expect(
      op("/logs/{id}/context", "get")
        .parameters.map((p: any) => p.name)
        .sort(),
    ).toEqual(["after", "before", "id", "query"]);
  });
});

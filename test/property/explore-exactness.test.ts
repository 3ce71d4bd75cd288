// Exactness (contract §10): every count of POST /logs/hits and POST /logs/facets equals what paging through
// POST /logs/query with the same query, from and to returns, on random entries and queries: bucket edges at and
// inside milliseconds, ties inside one bulk and one turn, null groups, tags, object paths and both time axes.
import { afterAll, expect, test } from "bun:test";
import fc from "fast-check";
import { textForm } from "../../src/query/match.ts";
import { LEVELS } from "../../src/schema.ts";
import { removeDir, startTestSluice, WS } from "../helpers/sluice.ts";

const T0 = Date.UTC(2026, 10, 22, 10, 0, 0, 0);
let now = T0;
const s = startTestSluice(undefined, { clock: () => now });
afterAll(async () => {
  await s.close();
  removeDir(s.dir);
});

const pick = <T>(xs: readonly T[]) => fc.constantFrom(...xs);
const VALUES = [500, "500", null, true, { x: 1 }, [1], 2.5, "ok", "", "U1"];
const entryArb = fc.record({
  level: pick(LEVELS),
  action: pick(["user.login", "User.Login", "order.created", "a"]),
  message: pick([null, "timeout at db", "ok"]),
  tags: fc.uniqueArray(pick(["a", "b", "B", "prod"]), { maxLength: 3 }),
  metadata: fc.oneof(
    fc.constant(null),
    fc.record({ status: pick(VALUES) }),
    fc.record({ http: fc.oneof(fc.record({ status: pick(VALUES) }), pick(VALUES)) }),
    fc.constant({}),
  ),
  actor: fc.oneof(fc.constant(null), fc.record({ id: pick(["u1", "U1", 5]) })),
  dc: fc.integer({ min: -3, max: 8 }),
});
/** a write, and what happens to the held postings after it: nothing, stored, or a store left in flight (then a block is named twice for a moment) */
const writeArb = fc.record({
  bulk: fc.boolean(),
  entries: fc.array(entryArb, { minLength: 1, maxLength: 6 }),
  dms: fc.integer({ min: 0, max: 6 }),
  postings: fc.constantFrom("held", "held", "stored", "in flight"),
});
const QUERIES = [
  "",
  "level=error",
  "level=error,warn",
  "tag=a",
  "tag=null",
  "tag!=b",
  "metadata.status=500",
  "metadata.http.status!=null",
  "action=user.login",
  "timeout",
  "actor.id~u",
];
const FIELDS = ["level", "action", "tag", "environment", "metadata.status", "metadata.http.status", "actor.id"];
/** an instant on a millisecond or inside one (then it is written with a fourth digit of fraction) */
const instant = (ms: number, inside: boolean) => new Date(ms).toISOString().replace("Z", inside ? "5Z" : "Z");
/** the first whole millisecond at or after an instant */
const ceilMs = (text: string) => Date.parse(text) + (/\.\d{4}Z$/.test(text) ? 1 : 0);
const caseArb = fc.record({
  writes: fc.array(writeArb, { minLength: 1, maxLength: 6 }),
  query: pick(QUERIES),
  from: fc.integer({ min: -4, max: 9 }),
  fromInside: fc.boolean(),
  span: fc.integer({ min: 0, max: 12 }),
  toInside: fc.boolean(),
  step: pick(["1ms", "2ms", "3ms", "1s", undefined]),
  groupBy: pick([undefined, ...FIELDS]),
  fields: fc.uniqueArray(pick(FIELDS), { minLength: 1, maxLength: 4 }),
  limit: fc.integer({ min: 1, max: 4 }),
  axis: pick(["server", "client"] as const),
  // the blocks merged into parts (storage/merge/merge.ts) before the counts, or not
  merged: fc.boolean(),
});

type Wire = {
  level: string;
  action: string;
  tags: string[];
  environment: string;
  metadata: Record<string, unknown> | null;
  actor: Record<string, unknown> | null;
  client_timestamp: string;
  server_timestamp: string;
};

/** groups is the reference reading of contract §10's groups from the wire form of an entry. */
function groups(e: Wire, field: string): string[] {
  if (field === "tag") return [...new Set(e.tags)];
  if (field === "level" || field === "action" || field === "environment") return [e[field]];
  const [root, ...path] = field.split(".");
  let at: unknown = e[root as "metadata" | "actor"];
  for (const k of path) {
    if (at === null || typeof at !== "object" || Array.isArray(at) || !Object.hasOwn(at, k)) return [];
    at = (at as Record<string, unknown>)[k];
  }
  const text = textForm(at);
  return text === undefined ? [] : [text];
}

const order = (a: { total: number; text: string | null }, b: { total: number; text: string | null }) =>
  b.total - a.total || (a.text === b.text ? 0 : a.text === null ? 1 : b.text === null ? -1 : a.text < b.text ? -1 : 1);

test("hits and facets count exactly what paging POST /logs/query returns, over blocks merged into parts and not (300 random cases, both axes)", async () => {
  await fc.assert(
    fc.asyncProperty(caseArb, async (c) => {
      const ws = await s.workspace();
      const key = await ws.key("development", "rw");
      const writes = [...c.writes].sort((a, b) => a.dms - b.dms);
      for (let i = 0; i < writes.length; ) {
        now = T0 + writes[i].dms;
        const turn: Promise<Response>[] = []; // the writes of one millisecond go out together: single ones share a block
        for (; i < writes.length && T0 + writes[i].dms === now; i++) {
          const bodies = writes[i].entries.map(({ dc, ...e }) => ({ ...e, clientTimestamp: new Date(T0 + dc).toISOString() }));
          if (writes[i].bulk) turn.push(s.call("POST", `${WS}/logs/bulk`, { key, body: bodies }));
          else for (const b of bodies) turn.push(s.call("POST", `${WS}/logs`, { key, body: b }));
        }
        for (const r of await Promise.all(turn)) expect(r.status).toBe(201);
        const postings = writes[i - 1].postings;
        if (postings === "stored") await s.svc.entries.postings.flush();
        else if (postings === "in flight") void s.svc.entries.postings.flush();
      }
      if (c.merged) await s.svc.entries.merger.mergeTenant({ ws: ws.id, env: "development" }, { ageMs: 0, idleMs: 0 });
      const from = instant(T0 + c.from, c.fromInside);
      const to = instant(T0 + c.from + c.span, c.toInside);
      if (c.span === 0 && (c.fromInside || !c.toInside)) return; // from < to, at full precision
      // the reference: every page of POST /logs/query
      const window = c.axis === "server" ? { from, to } : {};
      const query = c.axis === "server" ? c.query : `${c.query} client_timestamp>=${from} client_timestamp<${to}`.trim();
      const listed: Wire[] = [];
      let cursor: Record<string, string> = {};
      for (let guard = 0; guard < 20; guard++) {
        const r = await s.call("POST", `${WS}/logs/query`, { key, body: { query, ...window, pageSize: 100, ...cursor } });
        expect(r.status).toBe(200);
        listed.push(...((await r.json()) as Wire[]));
        const id = r.headers.get("x-next-cursor-id");
        if (!id) break;
        cursor = { cursorID: id, cursorTS: r.headers.get("x-next-cursor-ts")! };
      }

      const hits = await s.call("POST", `${WS}/logs/hits`, {
        key,
        body: { query: c.query, from, to, step: c.step, groupBy: c.groupBy, limit: c.limit, axis: c.axis },
      });
      const h = (await hits.json()) as {
        step_ms: number;
        buckets: string[];
        total: number;
        series: { group: Record<string, string | null> | null; counts: number[]; total: number }[];
        other: { counts: number[]; total: number } | null;
      };
      expect(hits.status).toBe(200);
      const step = h.step_ms;
      const fromMs = ceilMs(from);
      const toMs = ceilMs(to);
      const first = Math.floor(fromMs / step);
      const n = Math.floor((toMs - 1) / step) - first + 1;
      expect(h.buckets).toEqual(Array.from({ length: n }, (_, k) => new Date((first + k) * step).toISOString()));
      const bucketOf = (e: Wire) => Math.floor(Date.parse(c.axis === "server" ? e.server_timestamp : e.client_timestamp) / step) - first;
      const counts = (es: Wire[]) => {
        const out = new Array<number>(n).fill(0);
        for (const e of es) out[bucketOf(e)]++;
        return out;
      };
      expect(h.total).toBe(listed.length);
      if (!c.groupBy) {
        expect(h.series).toEqual([{ group: null, counts: counts(listed), total: listed.length }]);
        expect(h.other).toBeNull();
      } else {
        const by = new Map<string | null, Wire[]>();
        for (const e of listed) {
          const gs = groups(e, c.groupBy);
          for (const g of gs.length === 0 ? [null] : gs) by.set(g, [...(by.get(g) ?? []), e]);
        }
        const all = [...by].map(([text, es]) => ({ text, total: es.length, counts: counts(es) })).sort(order);
        const kept = all.slice(0, c.limit);
        const rest = all.slice(c.limit);
        expect(h.series).toEqual(kept.map((g) => ({ group: { [c.groupBy!]: g.text }, counts: g.counts, total: g.total })));
        expect(h.other).toEqual(
          rest.length === 0
            ? null
            : { counts: Array.from({ length: n }, (_, k) => rest.reduce((t, g) => t + g.counts[k], 0)), total: rest.reduce((t, g) => t + g.total, 0) },
        );
      }

      const facets = await s.call("POST", `${WS}/logs/facets`, { key, body: { query: c.query, from, to, fields: c.fields, limit: c.limit, axis: c.axis } });
      expect(facets.status).toBe(200);
      const f = (await facets.json()) as { total: number; facets: unknown[] };
      expect(f.total).toBe(listed.length);
      expect(f.facets).toEqual(
        c.fields.map((field) => {
          const by = new Map<string, number>();
          let missing = 0;
          let valued = 0;
          for (const e of listed) {
            const gs = groups(e, field);
            if (gs.length === 0) missing++;
            for (const g of gs) by.set(g, (by.get(g) ?? 0) + 1);
            valued += gs.length;
          }
          const values = [...by]
            .map(([text, total]) => ({ text, total }))
            .sort(order)
            .slice(0, c.limit)
            .map((v) => ({ value: v.text, count: v.total }));
          return { field, values, other: valued - values.reduce((t, v) => t + v.count, 0), missing, distinct: by.size, too_many: false };
        }),
      );
    }),
    { numRuns: 300 },
  );
}, 240_000);

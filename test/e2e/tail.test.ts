// Live tail (contract §10, GET /logs/tail): Server-Sent Events in ascending (server_timestamp, id) order, backfill,
// resume by Last-Event-ID or after= with nothing lost or repeated (across a restart and during writes), heartbeats,
// and revocation (overflow for a slow consumer and the per-key limit, one process's bounds: tail-bounds.test.ts).
import { describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WS, entry, removeDir, startTestSluice, type TestSluice } from "../helpers/sluice.ts";
import { bulk, open, tail, tailSluices, tenant } from "../helpers/tail.ts";

const sluice = tailSluices();
async function one(s: TestSluice, key: string, body: Record<string, unknown> = {}) {
  const r = await s.call("POST", `${WS}/logs`, { key, body: entry(body) });
  expect(r.status).toBe(201);
  return ((await r.json()) as { id: string }).id;
}
/** listed pages through POST /logs/query and gives the matching entries oldest first */
async function listed(s: TestSluice, key: string, query = ""): Promise<{ id: string; server_timestamp: string }[]> {
  const out: { id: string; server_timestamp: string }[] = [];
  let cursor = {};
  for (let guard = 0; guard < 1000; guard++) {
    const r = await s.call("POST", `${WS}/logs/query`, { key, body: { query, pageSize: 100, ...cursor } });
    out.push(...((await r.json()) as { id: string; server_timestamp: string }[]));
    const id = r.headers.get("x-next-cursor-id");
    if (!id) break;
    cursor = { cursorID: id, cursorTS: r.headers.get("x-next-cursor-ts") };
  }
  return out.reverse();
}
const cursorOf = (e: { id: string; server_timestamp: string }) => `${e.server_timestamp}_${e.id}`;

describe("GET /logs/tail", () => {
  test("each matching entry is one event: id <server_timestamp>_<id>, event entry, data the LogEntry; the stream starts after the newest stored entry", async () => {
    const s = sluice();
    const { key } = await tenant(s);
    await one(s, key, { level: "error", message: "before the tail" });
    const sse = await open(s, key, "query=level%3Derror");
    await one(s, key, { level: "info" });
    const id = await one(s, key, { level: "error", message: "live" });
    const [ev] = await sse.take(1);
    const data = JSON.parse(ev.data);
    expect(ev.event).toBe("entry");
    expect(data).toMatchObject({ id, level: "error", message: "live", environment: "development" });
    expect(ev.id).toBe(`${data.server_timestamp}_${id}`);
    expect(await sse.next(200)).toBeUndefined(); // nothing else: the info entry does not match, the first was stored before
    await sse.close();
  });

  test("events come in ascending (server_timestamp, id) order, each once, while single and bulk writes commit in the same turns", async () => {
    const s = sluice();
    const { key } = await tenant(s);
    const sse = await open(s, key);
    const writes: Promise<unknown>[] = [];
    for (let round = 0; round < 30; round++) {
      // one turn: single writes and bulk writes together, bulks prepared on the worker thread and inline
      writes.push(
        one(s, key),
        bulk(s, key, [{}, {}]),
        one(s, key),
        bulk(
          s,
          key,
          Array.from({ length: round % 3 === 0 ? 300 : 3 }, () => ({})),
        ),
        one(s, key),
      );
      if (round % 5 === 0) await Promise.all(writes.splice(0));
    }
    await Promise.all(writes);
    const all = await listed(s, key);
    const events = await sse.take(all.length);
    expect(events.map((e) => e.id)).toEqual(all.map(cursorOf));
    expect(await sse.next(200)).toBeUndefined();
    await sse.close();
  });

  test("each tail sends exactly the entries its query matches, as paging POST /logs/query lists them, from mixed concurrent writes", async () => {
    const s = sluice();
    const { key } = await tenant(s);
    const queries = ["tag=a", "tag=a,b", "level=error", "level=error,warn tag=b", "tag!=a", "", "tag=a message~x"];
    const tails = await Promise.all(queries.map((q) => open(s, key, `query=${encodeURIComponent(q)}`)));
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const body = () => ({
      level: ["info", "error", "warn"][rand(3)],
      tags: [[], ["a"], ["b"], ["a", "b"], ["c"]][rand(5)],
      message: ["x", "y", null][rand(3)],
    });
    for (let round = 0; round < 10; round++) {
      await Promise.all([bulk(s, key, Array.from({ length: 1 + rand(40) }, body)), one(s, key, body()), one(s, key, body()), bulk(s, key, [body(), body()])]);
    }
    for (const [k, q] of queries.entries()) {
      const want = await listed(s, key, q);
      const got = await tails[k].take(want.length);
      expect({ q, ids: got.map((e) => e.id) }).toEqual({ q, ids: want.map(cursorOf) });
      expect(await tails[k].next(100)).toBeUndefined();
      await tails[k].close();
    }
  });

  test("tails of one query each send every matching entry once, one live from the start and one resuming while writes go on", async () => {
    const s = sluice();
    const { key } = await tenant(s);
    const early = await open(s, key, "query=tag%3Da"); // a single tag= term: its rows come from the batch's postings, shared
    const first = await bulk(
      s,
      key,
      Array.from({ length: 30 }, (_, i) => ({ tags: i % 3 ? ["a"] : ["b"] })),
    );
    const [start] = await listed(s, key, "tag=a");
    expect(first).toContain(start.id);
    const writes = Promise.all(
      Array.from({ length: 5 }, (_, r) =>
        bulk(
          s,
          key,
          Array.from({ length: 20 }, (_, i) => ({ tags: (i + r) % 2 ? ["a"] : ["c"] })),
        ),
      ),
    );
    const late = await open(s, key, `query=tag%3Da&after=${encodeURIComponent(cursorOf(start))}`); // catches up while the others go live
    await writes;
    await one(s, key, { tags: ["a"] });
    const want = await listed(s, key, "tag=a");
    expect((await early.take(want.length)).map((e) => e.id)).toEqual(want.map(cursorOf));
    expect((await late.take(want.length - 1)).map((e) => e.id)).toEqual(want.slice(1).map(cursorOf));
    for (const t of [early, late]) {
      expect(await t.next(100)).toBeUndefined();
      await t.close();
    }
  });

  test("backfill first sends that many of the newest matching entries, oldest first, then goes on live", async () => {
    const s = sluice();
    const { key } = await tenant(s);
    const ids = await bulk(
      s,
      key,
      Array.from({ length: 10 }, (_, i) => ({ level: i % 2 ? "error" : "info" })),
    );
    const errors = ids.filter((_, i) => i % 2);
    const sse = await open(s, key, "backfill=3&query=level%3Derror");
    const live = await one(s, key, { level: "error" });
    const got = await sse.take(4);
    expect(got.map((e) => JSON.parse(e.data).id)).toEqual([...errors.slice(-3), live]);
    await sse.close();
  });

  test("Last-Event-ID or after= resumes: every matching entry after the cursor is sent exactly once, also across a restart", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sluice-tail-"));
    let s = sluice({}, dir);
    const { ws, key } = await tenant(s);
    const sse = await open(s, key);
    await bulk(s, key, [{ message: "a" }, { message: "b" }]);
    const [first] = await sse.take(1);
    await sse.close(); // the client goes away after one event
    await bulk(s, key, [{ message: "c" }]);
    await s.close();
    s = sluice({}, dir); // a restart
    await bulk(s, key, [{ message: "d" }]);
    const byHeader = await open(s, key, "", { "last-event-id": first.id! });
    const byParam = await open(s, key, `after=${encodeURIComponent(first.id!)}`);
    await one(s, key, { message: "e" });
    for (const r of [byHeader, byParam]) {
      expect((await r.take(4)).map((e) => JSON.parse(e.data).message)).toEqual(["b", "c", "d", "e"]);
      expect(await r.next(200)).toBeUndefined();
      await r.close();
    }
    expect(ws.id).toBeString();
  });

  test("a stream gives its starting cursor as an id without an event, so a reconnect before the first entry loses nothing", async () => {
    const s = sluice();
    const { key } = await tenant(s);
    await one(s, key, { message: "old" });
    const sse = await open(s, key);
    expect(await sse.next(100)).toBeUndefined();
    const [old] = await listed(s, key);
    expect(sse.lastEventId).toBe(cursorOf(old));
    await sse.close();
    await one(s, key, { message: "while away" });
    const again = await open(s, key, "", { "last-event-id": sse.lastEventId });
    expect(JSON.parse((await again.take(1))[0].data).message).toBe("while away");
    await again.close();
  });

  test("bad backfill, after or Last-Event-ID is VALIDATION_FAILED naming it; a bad query answers the codes of section 6", async () => {
    const s = sluice();
    const { key } = await tenant(s);
    for (const [params, headers, name] of [
      ["backfill=1001", {}, "backfill"],
      ["backfill=-1", {}, "backfill"],
      ["after=nope", {}, "after"],
      ["after=2026-11-22T10:00:00Z_notanid", {}, "after"],
      ["", { "last-event-id": "x_y" }, "Last-Event-ID"],
    ] as const) {
      const r = await tail(s, key, params, headers);
      const b = (await r.json()) as any;
      expect({ params, status: r.status, code: b.error_code, field: b.details?.errors?.[0]?.field }).toEqual({
        params,
        status: 400,
        code: "VALIDATION_FAILED",
        field: name,
      });
    }
    expect(((await (await tail(s, key, "query=level%3D")).json()) as any).error_code).toBe("VALIDATION_QUERY_SYNTAX");
  });

  test("a comment line `: ping` is sent every heartbeat period", async () => {
    const s = sluice({ tail: { heartbeatMs: 30 } });
    const { key } = await tenant(s);
    const sse = await open(s, key);
    await sse.next(200);
    expect(sse.comments.filter((c) => c === "ping").length).toBeGreaterThanOrEqual(2);
    await sse.close();
  });

  test("a revoked or expired key's open tails close within 5 s", async () => {
    let now = Date.now();
    const s = sluice({ tail: { recheckMs: 100 }, clock: () => now });
    const ws = await s.workspace();
    const made = await s.svc.admin.createKey(ws.id, { environment: "development", type: "ro" });
    const expiring = await ws.key("development", "ro", { expires_at: new Date(now + 60_000).toISOString() });
    const revoked = await open(s, made.key);
    const expired = await open(s, expiring);
    const started = Date.now();
    await s.svc.admin.revokeKey(made.id);
    now += 120_000;
    for (const sse of [revoked, expired]) {
      while (!sse.ended && Date.now() - started < 5000) await sse.next(100);
      expect(sse.ended).toBe(true);
    }
    expect(Date.now() - started).toBeLessThan(5000);
  });

  test("closing Sluice ends its open tails (a clean stop does not wait on them)", async () => {
    const s = startTestSluice();
    const { key } = await tenant(s);
    const sse = await open(s, key);
    await s.close();
    expect(await sse.next(1000)).toBeUndefined();
    expect(sse.ended).toBe(true);
    removeDir(s.dir);
  });
});

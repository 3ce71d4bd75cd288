// Hostile values: control characters in long tags and actions, and lone surrogates. Every value is written as a
// hostile client would, and then looked for through every index and filter, also after a restart (one process's
// storage internals: hostile-values-storage.test.ts; clients that go away: hostile-clients.test.ts).
import { afterAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { CONTROLS, idsOf, quoted } from "../helpers/hostile-values.ts";
import { entry, removeDir, startTestSluice, WS } from "../helpers/sluice.ts";

const json = (res: Response): Promise<any> => res.json();
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) removeDir(d);
});

describe("values the key encoding misread", () => {
  test("an action of 64+ units holding U+0000 leaves action search of its environment working, also after a restart", async () => {
    let s = startTestSluice(undefined, { ipRatePerMinute: -1 });
    dirs.push(s.dir);
    const ws = await s.workspace();
    const key = await ws.key("development", "rw");
    const action = `${"x".repeat(64)}\u0000\u0010abcdefghij`;
    const res = await s.call("POST", `${WS}/logs`, { key, body: entry({ action }) });
    expect(res.status).toBe(201);
    const { id } = await json(res);
    for (let round = 0; round < 2; round++) {
      expect(await idsOf(s, key, { action: "us" })).toEqual([]);
      expect(await idsOf(s, key, { query: 'action~"lo"' })).toEqual([]);
      expect(await idsOf(s, key, { query: `action~${quoted("\u0010abc")}` })).toEqual([id]);
      await s.close();
      s = startTestSluice(s.dir, { ipRatePerMinute: -1 });
    }
    await s.close();
  });
});

describe("lone surrogates", () => {
  const LONE = [
    { field: "message", body: entry({ message: "before \ud800 after" }) },
    { field: "action", body: entry({ action: "user.\udc00" }) },
    { field: "tags.1", body: entry({ tags: ["ok", "x\udfff"] }) },
    { field: "metadata.a.b", body: entry({ metadata: { a: { b: "\ud83d" } } }) },
    { field: "actor.list.2", body: entry({ actor: { list: [1, "ok", "\ude00"] } }) },
    { field: "context.k\ud800", body: entry({ context: { "k\ud800": 1 } }) },
  ];

  test("an entry with a lone surrogate in any stored string is refused with a 400 naming the field, and nothing is stored", async () => {
    const s = startTestSluice(undefined, { ipRatePerMinute: -1 });
    dirs.push(s.dir);
    const key = await (await s.workspace()).key("development", "rw");
    for (const { field, body } of LONE) {
      // JSON.stringify writes a lone surrogate as its \u escape, as a hostile client would send it
      const one = await s.call("POST", `${WS}/logs`, { key, raw: JSON.stringify(body), headers: { "content-type": "application/json" } });
      expect({ field, status: one.status, errors: (await json(one)).details?.errors }).toEqual({
        field,
        status: 400,
        errors: [expect.objectContaining({ field, log_index: null })],
      });
      const bulk = await s.call("POST", `${WS}/logs/bulk`, { key, raw: JSON.stringify([entry(), body]), headers: { "content-type": "application/json" } });
      expect({ field, status: bulk.status, errors: (await json(bulk)).details?.errors }).toEqual({
        field,
        status: 400,
        errors: [expect.objectContaining({ field, log_index: 1 })],
      });
      const validate = await s.call("POST", `${WS}/logs/validate`, { key, raw: JSON.stringify(body), headers: { "content-type": "application/json" } });
      expect({ field, verdict: await json(validate) }).toEqual({
        field,
        verdict: expect.objectContaining({ valid: false, errors: [expect.objectContaining({ field })] }),
      });
    }
    expect(await json(await s.call("GET", `${WS}/logs`, { key }))).toEqual([]);
    expect((await json(await s.call("GET", `${WS}/usage`, { key }))).used).toBe(0);
    await s.close();
  });

  test("a large bulk body (prepared on the ingest worker) with one lone surrogate is refused whole", async () => {
    const s = startTestSluice(undefined, { ipRatePerMinute: -1 });
    dirs.push(s.dir);
    const key = await (await s.workspace()).key("development", "rw");
    const body = Array.from({ length: 2_000 }, (_, i) => entry({ message: i === 1_234 ? "late \udbff" : `entry ${i} ${"y".repeat(60)}` }));
    const res = await s.call("POST", `${WS}/logs/bulk`, { key, raw: JSON.stringify(body), headers: { "content-type": "application/json" } });
    expect(res.status).toBe(400);
    expect((await json(res)).details.errors).toEqual([expect.objectContaining({ field: "message", log_index: 1_234 })]);
    expect((await json(await s.call("GET", `${WS}/usage`, { key }))).used).toBe(0);
    await s.close();
  });

  test("surrogate pairs, escaped or not, are stored and found exactly", async () => {
    const s = startTestSluice(undefined, { ipRatePerMinute: -1 });
    dirs.push(s.dir);
    const key = await (await s.workspace()).key("development", "rw");
    const raw =
      '{"action":"emoji.\\ud83d\\ude00","level":"info","clientTimestamp":"2026-11-22T10:00:00Z","message":"a \\ud83d\\ude00 b 😀","tags":["\\ud83d\\ude00"],"metadata":{"k\\ud83d\\ude00":"\\ud83d\\ude00"}}';
    const res = await s.call("POST", `${WS}/logs`, { key, raw, headers: { "content-type": "application/json" } });
    expect(res.status).toBe(201);
    const stored = await json(await s.call("GET", `${WS}/logs/${(await json(res)).id}`, { key }));
    expect(stored).toMatchObject({ action: "emoji.😀", message: "a 😀 b 😀", tags: ["😀"], metadata: { "k😀": "😀" } });
    expect(await idsOf(s, key, { query: 'tag="😀" action="emoji.😀" message~"😀 b"' })).toEqual([stored.id]);
    await s.close();
  });
});

describe("any hostile string", () => {
  // well-formed units; a lone surrogate is put into one field of half the entries
  const unit = fc.oneof(
    fc.constantFrom(...CONTROLS, "😀", "é", "\ufffd", "\ufeff", '"', "\\"),
    fc.string({ unit: "binary", minLength: 1, maxLength: 1 }).filter((c) => c.isWellFormed()),
    fc.constantFrom("a", "b", "x", "."),
  );
  const text = (min: number, max: number) => fc.integer({ min, max }).chain((n) => fc.array(unit, { minLength: n, maxLength: n }).map((u) => u.join("")));
  const lone = fc.constantFrom("\ud800", "\udbff", "\udc00", "\udfff");
  const hostileEntry = fc
    .record({
      action: text(1, 100).map((a) => `a${a}`), // not blank once trimmed
      message: fc.option(text(0, 120), { nil: null }),
      tags: fc.uniqueArray(
        text(1, 60).filter((t) => t.length <= 64),
        { maxLength: 3 },
      ), // a tag holds 1–64 UTF-16 units
      metadata: fc.option(fc.dictionary(text(1, 8), text(0, 70), { maxKeys: 2 }), { nil: null }),
      spoil: fc.option(fc.tuple(fc.constantFrom("action", "message", "tag", "metadata"), lone), { nil: undefined }),
    })
    .map(({ spoil, ...e }) => {
      if (spoil?.[0] === "action") e.action += spoil[1];
      if (spoil?.[0] === "message") e.message = `${e.message ?? ""}${spoil[1]}`;
      if (spoil?.[0] === "tag") e.tags = [...e.tags, `t${spoil[1]}`];
      if (spoil?.[0] === "metadata") e.metadata = { ...e.metadata, [`k${spoil[1]}`]: "v" };
      return e;
    });

  test("an entry of random control characters, surrogates and lengths is stored exactly and found by every index, or refused with nothing stored", async () => {
    const s = startTestSluice(undefined, { ipRatePerMinute: -1 });
    dirs.push(s.dir);
    const key = await (await s.workspace()).key("development", "rw");
    let stored = 0;
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(hostileEntry, async (e) => {
        const raw = JSON.stringify(entry(e));
        const res = await s.call("POST", `${WS}/logs`, { key, raw, headers: { "content-type": "application/json" } });
        const body = await json(res);
        const wellFormed = [e.action, e.message ?? "", ...e.tags, ...Object.entries(e.metadata ?? {}).flat()].every((t) => t.isWellFormed());
        if (!wellFormed) {
          refused++;
          expect({ status: res.status, code: body.error_code }).toEqual({ status: 400, code: "VALIDATION_FAILED" });
          return;
        }
        stored++;
        expect(res.status).toBe(201);
        const back = await json(await s.call("GET", `${WS}/logs/${body.id}`, { key }));
        expect({ action: back.action, message: back.message, tags: back.tags, metadata: back.metadata }).toEqual({ ...e, tags: e.tags });
        for (const tag of e.tags) expect(await idsOf(s, key, { query: `tag=${quoted(tag)}` })).toContain(body.id);
        expect(await idsOf(s, key, { query: `action=${quoted(e.action)}` })).toContain(body.id);
      }),
      { numRuns: 300 },
    );
    expect((await json(await s.call("GET", `${WS}/usage`, { key }))).used).toBe(stored);
    expect({ stored: stored > 30, refused: refused > 30 }).toEqual({ stored: true, refused: true });
    await s.close();
  }, 60_000);
});

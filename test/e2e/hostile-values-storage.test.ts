// Hostile values in one process's storage: long tags and actions with control characters found once their postings
// are flushed to the store (held, stored, after a restart), and a data directory in the old key layout rebuilt at open.
// They read and change the process's own databases: the cluster suite leaves this file out.
import { afterAll, describe, expect, test } from "bun:test";
import { CONTROLS, idsOf, quoted, unicodeName } from "../helpers/hostile-values.ts";
import { entry, removeDir, startTestSluice, WS } from "../helpers/sluice.ts";
import { INDEX_LAYOUT } from "../../src/storage/layout.ts";

const json = (res: Response): Promise<any> => res.json();
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) removeDir(d);
});

describe("values the key encoding misread", () => {
  test("a tag or action of 64+ units holding any control character is found by every index and filter: held, stored, after a restart", async () => {
    let s = startTestSluice(undefined, { ipRatePerMinute: -1 });
    dirs.push(s.dir);
    const ws = await s.workspace();
    const key = await ws.key("development", "rw");
    const written = CONTROLS.map((c) => ({
      c,
      tag: `${"x".repeat(62)}${c}y`, // 64 units: the longest tag there is
      action: `${"a".repeat(64)}${c}end`,
      shortTag: `t${c}`,
      runTag: c.repeat(64),
    }));
    const body = written.map((w) => entry({ action: w.action, tags: [w.tag, w.shortTag, w.runTag] }));
    const res = await s.call("POST", `${WS}/logs/bulk`, { key, body });
    expect(res.status).toBe(201);
    const ids: string[] = (await json(res)).ids;
    // one more entry with every value at once, so that no plan can get away with the first posting it finds
    expect((await s.call("POST", `${WS}/logs`, { key, body: entry({ action: "plain", tags: ["plain"] }) })).status).toBe(201);

    const check = async (phase: string) => {
      for (const [i, w] of written.entries()) {
        const want = [ids[i]];
        const at = `${phase} ${unicodeName(w.c)}`;
        const got = {
          tag: await idsOf(s, key, { query: `tag=${quoted(w.tag)}` }),
          shortTag: await idsOf(s, key, { query: `tag=${quoted(w.shortTag)}` }),
          runTag: await idsOf(s, key, { query: `tag=${quoted(w.runTag)}` }),
          tagsFilter: w.c === "," || w.c.trim() === "" ? want : await idsOf(s, key, { tags: w.tag }), // GET lists split on commas and trim blanks
          actionEq: await idsOf(s, key, { query: `action=${quoted(w.action)}` }),
          actionTilde: await idsOf(s, key, { query: `action~${quoted(`a${w.c}end`)}` }),
          actionFilter: await idsOf(s, key, { action: `a${w.c}e` }),
          bodyAction: await idsOf(s, key, { bodyAction: `${w.c}end` }),
        };
        expect({ at, got }).toEqual({
          at,
          got: { tag: want, shortTag: want, runTag: want, tagsFilter: want, actionEq: want, actionTilde: want, actionFilter: want, bodyAction: want },
        });
      }
    };
    await check("held");
    expect(await s.svc.entries.postings.flush()).toBe(true);
    await check("stored");
    await s.close();
    s = startTestSluice(s.dir, { ipRatePerMinute: -1 });
    await check("restarted");
    await s.close();
  });

  test("a data directory written in the old key layout is rebuilt at open: its action dictionary reads again and long tags are found", async () => {
    let s = startTestSluice(undefined, { ipRatePerMinute: -1 });
    dirs.push(s.dir);
    const ws = await s.workspace();
    const key = await ws.key("development", "rw");
    const tag = `${"x".repeat(62)}\u0000y`;
    const res = await s.call("POST", `${WS}/logs`, { key, body: entry({ action: "user.signup", tags: [tag] }) });
    const { id } = await json(res);
    await s.close();
    // what the old layout left: no version, postings lost, and a dictionary key that reads back as something else
    s = startTestSluice(s.dir, { ipRatePerMinute: -1 });
    await s.dbs.layout.remove("indexes");
    await s.dbs.postings.clearAsync();
    await s.dbs.dictionary.put([ws.id, "development", "v", `${"x".repeat(64)}\u0000\u0010abcdefghij`], "broken");
    await s.close();
    s = startTestSluice(s.dir, { ipRatePerMinute: -1 });
    expect(s.dbs.layout.get("indexes")).toBe(INDEX_LAYOUT);
    expect(await idsOf(s, key, { query: 'action~"sign"' })).toEqual([id]);
    expect(await idsOf(s, key, { query: `tag=${quoted(tag)}` })).toEqual([id]);
    const plan = await json(await s.call("POST", `${WS}/logs/query`, { key, body: { query: `tag=${quoted(tag)}`, explain: true } }));
    expect(plan.plan).toEqual({ index: "tag", term: expect.any(String), estimate_blocks: 1 });
    await s.close();
  });
});

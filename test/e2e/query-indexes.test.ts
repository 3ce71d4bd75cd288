// Query indexes over HTTP (contract §5, §6): an acknowledged entry is at once findable through every
// index, `explain` shows the chosen plan, and cursor paging through an index plan is exact.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { entry, removeDir, startTestSluice, WS, type TestSluice } from "../helpers/sluice.ts";

/** json reads a response body as the loosely typed JSON the assertions inspect. */
const json = (res: Response): Promise<any> => res.json();

const T0 = Date.parse("2026-11-22T10:00:00.000Z");

let s: TestSluice;
let now = T0;

beforeAll(() => {
  s = startTestSluice(undefined, { clock: () => now, ipRatePerMinute: -1 });
});
afterAll(async () => {
  await s.close();
  removeDir(s.dir);
});

const fresh = async () => (await s.workspace()).key("development", "rw");
const post = (key: string, path: string, body: unknown) => s.call("POST", `${WS}${path}`, { key, body });

async function ids(res: Response): Promise<string[]> {
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.map((e: { id: string }) => e.id);
}
const find = async (key: string, query: string) => ids(await post(key, "/logs/query", { query, pageSize: 100 }));

interface Explained {
  plan: { index: string; term: string | null; estimate_blocks: number };
  estimates: { index: string; term: string | null; estimate_blocks: number }[];
  residual: string;
  range: { from: string | null; to: string | null };
}
async function explain(key: string, body: Record<string, unknown>): Promise<Explained> {
  const res = await post(key, "/logs/query", { ...body, explain: true });
  expect(res.status).toBe(200);
  return json(res);
}

/** noise writes `blocks` bulk writes (one block each) of entries that no test query below matches. */
async function noise(key: string, blocks: number) {
  for (let b = 0; b < blocks; b++) {
    const batch = Array.from({ length: 5 }, (_, i) => entry({ action: `noise.op${i}`, level: "info", message: `routine ${b} step`, tags: ["common"] }));
    expect((await post(key, "/logs/bulk", batch)).status).toBe(201);
    now += 1;
  }
}

describe("an entry answered 201 is at once findable through every index", () => {
  let key: string;
  let written: { id: string };
  beforeAll(async () => {
    key = await fresh();
    await noise(key, 40);
    const res = await post(
      key,
      "/logs",
      entry({
        action: "vault.unseal_attempt",
        level: "fatal",
        message: "Quorum reached for vault zebra",
        tags: ["sealed-tag"],
      }),
    );
    expect(res.status).toBe(201);
    written = await json(res); // no sleep, no retry between this answer and the reads below
  });

  test.each([
    ["level", "level=fatal"],
    ["tag", "tag=sealed-tag"],
    ["action", "action=VAULT.UNSEAL_ATTEMPT"],
    ["action", "action~unseal"],
    ["action", 'action~"vault.*attempt"'],
    ["action", "action@unseal"],
    ["substring", "message@zebra"], // the filters hold the word: full text is not asked
    ["substring", "quorum"],
    ["fulltext", 'message="quorum reached for vault zebra"'],
    ["id", "id=<id>"],
  ])("through the %s index: %s", async (index, q) => {
    const query = q.replace("<id>", written.id);
    expect((await explain(key, { query })).plan.index).toBe(index);
    expect(await find(key, query)).toEqual([written.id]);
  });

  test("through GET /logs filters on level and tag", async () => {
    const res = await s.call("GET", `${WS}/logs?levels=fatal&tags=sealed-tag`, { key });
    expect(await ids(res)).toEqual([written.id]);
  });
});

describe("explain", () => {
  let key: string;
  const rare: string[] = [];
  beforeAll(async () => {
    key = await fresh();
    for (let b = 0; b < 60; b++) {
      const batch = Array.from({ length: 5 }, (_, i) =>
        entry({
          action: `svc.op${i}`,
          level: b % 2 === 0 ? "info" : "debug",
          message: `step ${i} done`,
          tags: ["common"],
        }),
      );
      if (b === 17) batch[2] = entry({ action: "svc.op2", level: "info", message: "step 2 done", tags: ["common", "rare-tag"] });
      if (b === 31) batch[4] = entry({ action: "svc.op4", level: "fatal", message: "step 4 done", tags: ["common"] });
      if (b === 45) batch[1] = entry({ action: "svc.op1", level: "debug", message: "step 1 done with xylophone", tags: ["common"] });
      const res = await post(key, "/logs/bulk", batch);
      expect(res.status).toBe(201);
      const got = (await json(res)).ids as string[];
      if (b === 17) rare[0] = got[2];
      if (b === 31) rare[1] = got[4];
      if (b === 45) rare[2] = got[1];
      now += 1;
    }
  });

  test("returns {plan:{index, term, estimate_blocks}, estimates, residual, range} and no entries", async () => {
    const from = new Date(T0).toISOString();
    const to = new Date(T0 + 86_400_000).toISOString();
    const res = await post(key, "/logs/query", { query: "level=info tag=common", from, to, explain: true, pageSize: 10 });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-next-cursor-id")).toBeNull();
    const body = await json(res);
    expect(Array.isArray(body)).toBe(false);
    expect(Object.keys(body).sort()).toEqual(["estimates", "plan", "range", "residual"]);
    expect(Object.keys(body.plan).sort()).toEqual(["estimate_blocks", "index", "term"]);
    expect(typeof body.plan.estimate_blocks).toBe("number");
    expect(body.residual).toBe("level=info tag=common");
    expect(body.range).toMatchObject({ from, to });
    const shapes = body.estimates.map((e: Explained["plan"]) => [e.index, e.term]);
    expect(shapes).toEqual(
      expect.arrayContaining([
        ["level", "level=info"],
        ["tag", "tag=common"],
      ]),
    );
    expect(shapes.map((x: string[]) => x[0])).toContain("range");
    expect(body.estimates).toContainEqual(body.plan);
  });

  test("with a rare tag among many entries, explain picks the tag index, and the read finds it", async () => {
    const plan = await explain(key, { query: "level=info tag=rare-tag" });
    expect(plan.plan).toMatchObject({ index: "tag", term: "tag=rare-tag" });
    expect(plan.plan.estimate_blocks).toBeLessThan(plan.estimates.find((e) => e.index === "range")!.estimate_blocks);
    expect(await find(key, "level=info tag=rare-tag")).toEqual([rare[0]]);
  });

  test("with a selective level, explain picks the level index", async () => {
    expect((await explain(key, { query: "tag=common level=fatal" })).plan).toMatchObject({ index: "level", term: "level=fatal" });
    expect(await find(key, "tag=common level=fatal")).toEqual([rare[1]]);
  });

  test("with a rare word, explain picks the word filters, and shows full text's estimate beside them", async () => {
    const plan = await explain(key, { query: "tag=common xylophone" });
    expect(plan.plan).toMatchObject({ index: "substring", term: "xylophone", estimate_blocks: 1 });
    expect(plan.estimates).toContainEqual({ index: "fulltext", term: "xylophone", estimate_blocks: 1 });
    expect(await find(key, "tag=common xylophone")).toEqual([rare[2]]);
  });

  test("environment=<other environment> picks the index none and reads nothing", async () => {
    const plan = await explain(key, { query: "tag=common environment=staging" });
    expect(plan.plan).toMatchObject({ index: "none", estimate_blocks: 0 });
    expect(await find(key, "tag=common environment=staging")).toEqual([]);
  });

  test("with no term an index answers, explain picks the range scan over every block", async () => {
    expect((await explain(key, {})).plan).toMatchObject({ index: "range", term: null, estimate_blocks: 60 });
    expect((await explain(key, { query: "metadata.k!=1 level!=info" })).plan).toMatchObject({ index: "range", term: null });
  });
});

describe("cursor paging through an index plan never repeats nor skips; the last page has no cursor", () => {
  let key: string;
  const written: { id: string; ms: number; hot: boolean; debug: boolean; needle: boolean; job: boolean }[] = [];
  beforeAll(async () => {
    key = await fresh();
    now = T0 + 3_600_000;
    for (let b = 0; b < 120; b++) {
      now = T0 + 3_600_000 + Math.floor(b / 3); // three writes share each millisecond: their blocks interleave
      const flags = Array.from({ length: 5 }, (_, i) => ({
        hot: b % 3 !== 2 && i % 2 === 0,
        debug: b % 4 === 0 && i % 2 === 1,
        needle: b % 2 === 0 && i === 1,
        job: b % 5 !== 0 && i === 3,
      }));
      const batch = flags.map((f, i) =>
        entry({
          action: f.job ? `batch.job${b}` : `web.req${i}`,
          level: f.debug ? "debug" : "info",
          message: f.needle ? `found a needle in block ${b}` : `request ${i}`,
          tags: f.hot ? ["hot"] : ["cold"],
        }),
      );
      const res = await post(key, "/logs/bulk", batch);
      expect(res.status).toBe(201);
      for (const [i, id] of ((await json(res)).ids as string[]).entries()) written.push({ id, ms: now, ...flags[i] });
    }
  });

  /** expected is the matching entries in the contract's order: server_timestamp desc, then id desc. */
  const expected = (keep: (w: (typeof written)[number]) => boolean) =>
    written
      .filter(keep)
      .sort((a, b) => b.ms - a.ms || (a.id < b.id ? 1 : -1))
      .map((w) => w.id);

  async function pageThrough(body: Record<string, unknown>, between?: () => Promise<unknown>): Promise<string[]> {
    const seen: string[] = [];
    let cursor: Record<string, string> = {};
    for (let n = 0; n < 200; n++) {
      const res = await post(key, "/logs/query", { ...body, ...cursor, pageSize: 10 });
      const page = await json(res);
      expect(res.status).toBe(200);
      seen.push(...page.map((e: { id: string }) => e.id));
      const next = [res.headers.get("x-next-cursor-id"), res.headers.get("x-next-cursor-ts")];
      if (next[0] === null && next[1] === null) return seen;
      expect(page).toHaveLength(10);
      expect(next).toEqual([page[9].id, page[9].server_timestamp]);
      cursor = { cursorID: next[0]!, cursorTS: next[1]! };
      await between?.();
    }
    throw new Error("paging did not end");
  }

  test.each([
    ["tag", "tag=hot", (w: (typeof written)[number]) => w.hot],
    ["level", "level=debug", (w: (typeof written)[number]) => w.debug],
    ["substring", "needle", (w: (typeof written)[number]) => w.needle],
    ["action", "action~batch.job", (w: (typeof written)[number]) => w.job],
  ])("through the %s index (%s)", async (index, query, keep) => {
    expect((await explain(key, { query })).plan.index).toBe(index);
    const want = expected(keep);
    expect(want.length).toBeGreaterThanOrEqual(60);
    expect(await pageThrough({ query })).toEqual(want);
  });

  test("through the tag index while matching entries keep arriving: the entries stored before are all seen, once each", async () => {
    const before = expected((w) => w.hot);
    expect(before.length).toBeGreaterThan(200);
    const arrive = async () => {
      now += 1;
      expect((await post(key, "/logs/bulk", [entry({ tags: ["hot"] }), entry({ tags: ["cold"] })])).status).toBe(201);
    };
    const seen = await pageThrough({ query: "tag=hot" }, arrive);
    expect(new Set(seen).size).toBe(seen.length);
    const old = new Set(before);
    expect(seen.filter((id) => old.has(id))).toEqual(before);
  });
});

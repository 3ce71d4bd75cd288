// Needle queries over HTTP (contract §6): a rare value in a JSON field, a message or action substring and a rare
// word are answered through the block filters, `explain` shows those indexes with their estimates, the answer is
// what the full scan gives, and it stays so after a restart and through the cursor.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { entry, removeDir, startTestSluice, WS, type TestSluice } from "../helpers/sluice.ts";

const json = (res: Response): Promise<any> => res.json();
const T0 = Date.parse("2026-11-24T10:00:00.000Z");
let s: TestSluice;
let now = T0;
let key: string;

const post = (path: string, body: unknown) => s.call("POST", `${WS}${path}`, { key, body });
async function find(query: string, extra: Record<string, unknown> = {}): Promise<string[]> {
  const res = await post("/logs/query", { query, pageSize: 100, ...extra });
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.map((e: { id: string }) => e.id);
}
async function explain(query: string) {
  const res = await post("/logs/query", { query, explain: true });
  expect(res.status).toBe(200);
  return (await json(res)) as {
    plan: { index: string; estimate_blocks: number };
    estimates: { index: string; term: string | null; estimate_blocks: number }[];
  };
}

const special: Record<string, string> = {};
beforeAll(async () => {
  s = startTestSluice(undefined, { clock: () => now, ipRatePerMinute: -1 });
  key = await (await s.workspace()).key("development", "rw");
  // 30 blocks of 20 ordinary entries; one block holds the rare values
  for (let b = 0; b < 30; b++) {
    const batch = Array.from({ length: 20 }, (_, i) =>
      entry({
        action: `shop.op${i % 3}`,
        message: `routine step ${b * 20 + i} done`,
        actor: { email: `user${i}@example.com` },
        metadata: { order: { id: `ord-${b}-${i}`, total: b * 100 + i } },
      }),
    );
    if (b === 17) {
      batch[4] = entry({
        action: "refund.issued-8812",
        message: "payment EQ-5A1M9O refused by the bank",
        actor: { email: "rare@example.com" },
        metadata: { order: { id: "ord-needle", total: 987654 } },
      });
    }
    const res = await post("/logs/bulk", batch);
    expect(res.status).toBe(201);
    if (b === 17) special.id = (await json(res)).ids[4];
    now += 1;
  }
});
afterAll(async () => {
  await s.close();
  removeDir(s.dir);
});

/** each needle: what it is, the query, the filter index that finds it, and the plan chosen (the action dictionary ties with it for actions) */
const NEEDLES: [string, string, "value" | "substring", string?][] = [
  ["a JSON string field", 'actor.email="rare@example.com"', "value"],
  ["a nested path", 'metadata.order.id="ord-needle"', "value"],
  ["a number", "metadata.order.total=987654", "value"],
  ["a message substring, any case", 'message~"eq-5a1m"', "substring"],
  ["an action substring", 'action~"issued-88"', "substring", "action"],
];

for (const [what, query, index, chosen = index] of NEEDLES) {
  test(`a rare value (${what}) is found in one block by the ${index} index, which explain shows with its estimate`, async () => {
    const plan = await explain(query);
    const own = plan.estimates.find((c) => c.index === index);
    expect(own?.estimate_blocks).toBe(1);
    expect(plan.plan.index).toBe(chosen);
    expect(plan.estimates.find((c) => c.index === "range")?.estimate_blocks).toBeGreaterThan(1); // counted only as far as it must
    expect(await find(query)).toEqual([special.id]);
  });
}

test("a rare word is found in one block through the filters, which hold its words; explain still shows full text's estimate", async () => {
  const plan = await explain("refused");
  expect(plan.plan).toMatchObject({ index: "substring", estimate_blocks: 1 });
  expect(plan.estimates.find((c) => c.index === "fulltext")).toMatchObject({ term: "refused", estimate_blocks: 1 });
  expect(await find("refused")).toEqual([special.id]);
});

test("two terms with filters are found through their filters together, in the one block holding both", async () => {
  const query = 'payment actor.email="rare@example.com"';
  const plan = await explain(query);
  expect(plan.plan).toMatchObject({ index: "filters", estimate_blocks: 1 });
  expect(plan.estimates.find((c) => c.index === "filters")?.term).toBe("payment actor.email=rare@example.com");
  expect(await find(query)).toEqual([special.id]);
  // each alone is in the block, but not in one entry: the filters together may name it, the entries decide
  expect(await find('routine actor.email="rare@example.com"')).toEqual([]);
});

test("a value that is everywhere is read by the range scan, and the filter's answer equals it page by page", async () => {
  const query = 'actor.email="user3@example.com"';
  expect((await explain(query)).plan.index).toBe("range");
  const all = await find(query);
  expect(all.length).toBe(30);
  // page through with the cursor, ten at a time: the same entries in the same order
  const paged: string[] = [];
  let extra: Record<string, unknown> = { pageSize: 10 };
  for (let guard = 0; guard < 20; guard++) {
    const res = await post("/logs/query", { query, ...extra });
    const page = (await json(res)) as { id: string }[];
    expect(res.status, JSON.stringify(page)).toBe(200);
    paged.push(...page.map((e) => e.id));
    const cursorID = res.headers.get("x-next-cursor-id");
    if (!cursorID) break;
    extra = { pageSize: 10, cursorID, cursorTS: res.headers.get("x-next-cursor-ts") };
  }
  expect(paged).toEqual(all);
});

test("after a restart the filters still find every rare value", async () => {
  await s.close();
  s = startTestSluice(s.dir, { clock: () => now, ipRatePerMinute: -1 });
  for (const [, query, index, chosen = index] of NEEDLES) {
    expect((await explain(query)).plan.index).toBe(chosen);
    expect(await find(query)).toEqual([special.id]);
  }
});

test("a value in one block of five is read through its filter even when both counts stop at the cap: the filter reached further back", async () => {
  const other = await (await s.workspace()).key("development", "rw");
  const want: string[] = [];
  for (let b = 0; b < 1300; b++) {
    const sparse = b % 5 === 0;
    const res = await s.call("POST", `${WS}/logs/bulk`, { key: other, body: [entry({ metadata: { k: sparse ? "sparse" : `dense-${b}` } }), entry()] });
    expect(res.status).toBe(201);
    if (sparse) want.unshift((await json(res)).ids[0]);
    now += 1;
  }
  const res = await s.call("POST", `${WS}/logs/query`, { key: other, body: { query: 'metadata.k="sparse"', explain: true } });
  const plan = await json(res);
  expect(plan.plan.index).toBe("value");
  expect(plan.estimates.map((c: { estimate_blocks: number }) => c.estimate_blocks)).toEqual([33, 33]); // a filter alone against the range scan: counted to 32
  const got = await s.call("POST", `${WS}/logs/query`, { key: other, body: { query: 'metadata.k="sparse"', pageSize: 100 } });
  expect(((await json(got)) as { id: string }[]).map((e) => e.id)).toEqual(want.slice(0, 100));
}, 30_000); // 1,300 writes one after another

test("a value named by its stripe's filter is found at any place in a block of 1,000, a stripe's first and last included, and one in both stripes in both", async () => {
  const other = await (await s.workspace()).key("development", "rw");
  for (let b = 0; b < 3; b++) {
    // blocks without the values: the range scan would read more blocks than the filter names
    expect((await s.call("POST", `${WS}/logs/bulk`, { key: other, body: [entry({ context: { request_id: `other-${b}` } })] })).status).toBe(201);
    now += 1;
  }
  const batch = Array.from({ length: 1000 }, (_, i) => entry({ context: { request_id: `req-${i}`, pair: `pair-${i % 500}` } }));
  const res = await s.call("POST", `${WS}/logs/bulk`, { key: other, body: batch });
  expect(res.status).toBe(201);
  const ids: string[] = (await json(res)).ids;
  now += 1;
  const query = async (q: string) => {
    const r = await s.call("POST", `${WS}/logs/query`, { key: other, body: { query: q, pageSize: 100 } });
    expect(r.status).toBe(200);
    return ((await json(r)) as { id: string }[]).map((e) => e.id);
  };
  const planOf = async (q: string) => (await json(await s.call("POST", `${WS}/logs/query`, { key: other, body: { query: q, explain: true } }))).plan.index;
  for (const i of [0, 1, 255, 510, 511, 512, 513, 777, 998, 999]) {
    expect(await planOf(`context.request_id="req-${i}"`)).toBe("value");
    expect(await query(`context.request_id="req-${i}"`)).toEqual([ids[i]]);
  }
  // entries i and i + 500 lie in different stripes: newest first, the second stripe's entry comes first
  for (const i of [0, 11, 499]) expect(await query(`context.pair="pair-${i}"`)).toEqual([ids[i + 500], ids[i]]);
});

// Full text (contract §5, §6): it is indexed off the request path, yet a search right after a 201 finds the entry.
import { expect, test } from "bun:test";
import { entry, removeDir, startTestSluice, WS, type TestSluice } from "../helpers/sluice.ts";

/** json reads a response body as the loosely typed JSON the assertions inspect. */
const json = (res: Response): Promise<any> => res.json();
async function ids(res: Response): Promise<string[]> {
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.map((e: { id: string }) => e.id);
}
const search = async (s: TestSluice, key: string, query: string) => ids(await s.call("POST", `${WS}/logs/query`, { key, body: { query, pageSize: 100 } }));

test("full text is fed off the request path, yet every entry answered 201 is found by the search that follows it", async () => {
  const t = startTestSluice(undefined, { segmentEntries: 5_000 }); // several seals while the writes race
  const key = await (await t.workspace()).key("development", "rw");
  const bulks = 40;
  const written = await Promise.all(
    Array.from({ length: bulks }, async (_, b) => {
      const body = Array.from({ length: 250 }, (_, i) => entry({ message: `${i === 249 ? `needle${b}` : "hay"} filler words ${b}-${i}` }));
      const res = await t.call("POST", `${WS}/logs/bulk`, { key, body });
      expect(res.status).toBe(201);
      return ((await json(res)).ids as string[])[249];
    }),
  );
  // each search runs right after the writes, while the worker may still be indexing later blocks
  for (let b = bulks - 1; b >= 0; b--) expect(await search(t, key, `needle${b}`)).toEqual([written[b]]);
  await t.close();
  removeDir(t.dir);
});

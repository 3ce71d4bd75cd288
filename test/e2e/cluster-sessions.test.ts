// Web explorer sessions on a cluster (contract §12 and §13: every rule holds whichever node answers): a session signed
// in on one node works on every node, sign-out on one ends it on all, a revoked key ends its sessions everywhere,
// and the idle time counts uses made on any node. Sessions live in the meta bucket, hashed, mirrored by every node.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestCluster, type TestCluster } from "../helpers/cluster.ts";
import { WS, entry } from "../helpers/sluice.ts";

let c: TestCluster;
let now = Date.now();
let key: string;
let wsId: string;

beforeAll(async () => {
  c = await startTestCluster({ app: { clock: () => now } });
  const ws = await c.workspace();
  wsId = ws.id;
  const made = await c.admin(0, "POST", `/workspaces/${ws.id}/keys`, { name: "explorer", environment: "production", type: "rw" });
  ({ key } = (await made.json()) as { key: string });
  expect((await c.call(1, "POST", `${WS}/logs`, { key, body: entry({ message: "seen everywhere" }) })).status).toBe(201);
}, 60_000);
afterAll(async () => {
  await c?.close();
}, 30_000);

/** signIn posts the key to node i's /ui/session and returns the cookie pair to send back. */
async function signIn(i: number, k = key): Promise<string> {
  const r = await c.call(i, "POST", "/ui/session", { body: { key: k } });
  expect(r.status).toBe(200);
  return (r.headers.get("set-cookie") ?? "").split(";")[0];
}
const info = (i: number, cookie: string) => c.call(i, "GET", `${WS}/info`, { headers: { cookie } });

describe("web explorer sessions on a cluster", () => {
  test("a session signed in on one node authenticates reads on every node", async () => {
    const cookie = await signIn(0);
    for (const i of [0, 1, 2]) {
      const r = await info(i, cookie);
      expect(r.status).toBe(200);
      expect(((await r.json()) as { project: { id: string } }).project.id).toBe(wsId);
      const list = await c.call(i, "POST", `${WS}/logs/query`, { body: { query: "everywhere" }, headers: { cookie, "x-sluice-ui": "1" } });
      expect(list.status).toBe(200);
      expect(((await list.json()) as { message: string }[]).map((e) => e.message)).toEqual(["seen everywhere"]);
    }
  }, 30_000);

  test("the bucket holds the session's token and key only hashed", async () => {
    const cookie = await signIn(2);
    const token = cookie.slice(cookie.indexOf("=") + 1);
    const kv = c.nodes[0].link.meta;
    const names: string[] = [];
    for await (const name of await kv.keys()) names.push(name);
    const values = await Promise.all(names.map(async (n) => new TextDecoder("latin1").decode((await kv.get(n))?.value)));
    const held = names.join(" ") + values.join(" ");
    const metaKeys = names.map((n) => JSON.parse(Buffer.from(n, "base64url").toString()) as string[]); // meta-mirror.ts bucketKey
    expect(metaKeys.some((k) => k[0] === "session")).toBe(true);
    expect(held).not.toContain(token);
    expect(held).not.toContain(key);
    expect(held).not.toContain(key.slice(-20));
  }, 30_000);

  test("sign-out on one node ends the session on every node once it answers", async () => {
    const cookie = await signIn(0);
    for (const i of [0, 1, 2]) expect((await info(i, cookie)).status).toBe(200);
    expect((await c.call(1, "DELETE", "/ui/session", { headers: { cookie } })).status).toBe(204);
    for (const i of [2, 0, 1]) {
      const r = await info(i, cookie);
      expect(r.status).toBe(401);
      expect(((await r.json()) as { error_code: string }).error_code).toBe("AUTH_INVALID_API_KEY");
    }
  }, 30_000);

  test("a key revoked through one node ends its sessions on every node", async () => {
    const made = await c.admin(0, "POST", `/workspaces/${wsId}/keys`, { name: "revoked", environment: "production", type: "ro" });
    const k = (await made.json()) as { id: string; key: string };
    const cookie = await signIn(1, k.key);
    for (const i of [0, 1, 2]) expect((await info(i, cookie)).status).toBe(200);
    expect((await c.admin(2, "DELETE", `/keys/${k.id}`)).status).toBe(204);
    for (const i of [0, 1, 2]) expect((await info(i, cookie)).status).toBe(401);
  }, 30_000);

  test("the idle time counts uses on every node, and the lifetime holds on every node", async () => {
    const cookie = await signIn(0);
    now += 100 * 60_000;
    expect((await info(1, cookie)).status).toBe(200); // used on node 1 only
    now += 110 * 60_000; // 210 min after sign-in, 110 after that use: node 2 counts from it
    expect((await info(2, cookie)).status).toBe(200);
    now += 121 * 60_000;
    expect((await info(0, cookie)).status).toBe(401);

    const busy = await signIn(1);
    for (let h = 0; h < 12; h++) {
      now += 60 * 60_000;
      expect((await info(h % 3, busy)).status).toBe(h < 11 ? 200 : 401);
    }
  }, 30_000);
});

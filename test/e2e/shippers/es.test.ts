// Contract §11, Elasticsearch bulk: the official client's bulk and helpers.bulk send to /es/_bulk and /es/<index>/_bulk.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Client as EsClient, HttpConnection } from "@elastic/elasticsearch";
import { removeDir } from "../../helpers/sluice.ts";
import { listen, type Listening, storedEntries } from "../../helpers/shippers.ts";

let l: Listening;
beforeAll(() => {
  l = listen();
});
afterAll(async () => {
  await l.stop();
  removeDir(l.s.dir);
});

/** Client is the official client over Node's http module: its default (undici) connection does not run on Bun yet. */
const Client = class extends EsClient {
  constructor(opts: ConstructorParameters<typeof EsClient>[0]) {
    super({ Connection: HttpConnection, ...opts });
  }
};

const fresh = async (plan = "unlimited") => (await l.s.workspace(plan)).key("development", "rw");

test("client.bulk: create and index items stored with the mapping; _id is Sluice's id; other actions are per-item errors", async () => {
  const key = await fresh();
  const client = new Client({ node: `${l.base}/es`, auth: { apiKey: key } });
  const r = await client.bulk({
    operations: [
      { create: { _index: "app-logs" } },
      {
        "@timestamp": "2026-11-22T10:00:00.123Z",
        message: "login ok",
        "log.level": "WARNING",
        event: { action: "user.login" },
        tags: ["web"],
        actor: { id: "u1" },
        "http.status_code": 200,
      },
      { index: { _index: "app-logs" } },
      { timestamp: 1795341600456, message: "no action", severity: "err", context: { region: "eu" } },
      { update: { _index: "app-logs", _id: "x" } },
      { doc: { a: 1 } },
      { delete: { _index: "app-logs", _id: "x" } },
    ],
  });
  expect(r.errors).toBe(true);
  expect(r.items.map((i) => Object.keys(i)[0])).toEqual(["create", "index", "update", "delete"]);
  expect(r.items[0].create).toMatchObject({ _index: "app-logs", status: 201, result: "created" });
  expect(r.items[1].index).toMatchObject({ _index: "app-logs", status: 201 });
  expect(r.items[2].update?.status).toBe(400);
  expect(r.items[3].delete?.error?.reason).toContain("delete");
  const stored = await storedEntries(l.s, key);
  expect(stored.map((e) => e.id)).toEqual([String(r.items[0].create?._id), String(r.items[1].index?._id)]);
  expect(stored[0]).toMatchObject({
    action: "user.login",
    level: "warn",
    message: "login ok",
    client_timestamp: "2026-11-22T10:00:00.123Z",
    tags: ["web"],
    actor: { id: "u1" },
    metadata: { http: { status_code: 200 }, log: { level: "WARNING" }, event: { action: "user.login" } },
  });
  expect(stored[1]).toMatchObject({
    action: "app-logs",
    level: "error",
    message: "no action",
    client_timestamp: "2026-11-22T10:00:00.456Z",
    context: { region: "eu" },
  });
});

test("helpers.bulk to /es/<index>/_bulk with Basic auth: every document stored, the path's index as action", async () => {
  const key = await fresh();
  const client = new Client({ node: `${l.base}/es`, auth: { username: "shipper", password: key } });
  const docs = Array.from({ length: 25 }, (_, i) => ({ "@timestamp": "2026-11-22T10:00:00Z", message: `doc ${i}`, level: "debug" }));
  const result = await client.helpers.bulk({ datasource: docs, onDocument: () => ({ create: {} }), flushBytes: 500, index: "nightly" });
  expect(result.failed).toBe(0);
  const stored = await storedEntries(l.s, key);
  expect(stored.length).toBe(25);
  expect(new Set(stored.map((e) => `${e.action}/${e.level}`))).toEqual(new Set(["nightly/debug"]));
});

test("a rejected item answers status 400 with error {type, reason}, the others are stored", async () => {
  const key = await fresh("free");
  const client = new Client({ node: `${l.base}/es`, auth: { apiKey: key } });
  const r = await client.bulk({ index: "small", operations: [{ create: {} }, { message: "x".repeat(900) }, { create: {} }, { message: "fits" }] });
  expect(r.errors).toBe(true);
  expect(r.items[0].create).toMatchObject({ status: 400, error: { type: "document_parsing_exception" } });
  expect(r.items[0].create?.error?.reason).toContain("700");
  expect(r.items[1].create).toMatchObject({ status: 201 });
  expect((await storedEntries(l.s, key)).map((e) => [e.action, e.message])).toEqual([["small", "fits"]]);
});

test("GET /es/ answers a version 8 info document, and every answer carries X-Elastic-Product: Elasticsearch", async () => {
  const key = await fresh();
  const client = new Client({ node: `${l.base}/es`, auth: { apiKey: key } });
  const info = await client.info();
  expect(info.version.number).toStartWith("8.");
  for (const [method, path, headers] of [
    ["GET", "/es/", { authorization: `ApiKey ${key}` }],
    ["POST", "/es/_bulk", { authorization: `ApiKey ${key}`, "content-type": "application/x-ndjson" }],
    ["POST", "/es/_bulk", {}],
  ] as const) {
    const r = await fetch(`${l.base}${path}`, { method, headers, body: method === "POST" ? '{"create":{}}\n{"message":"m"}\n' : undefined });
    expect(r.headers.get("x-elastic-product")).toBe("Elasticsearch");
  }
});

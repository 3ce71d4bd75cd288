// Contract §7: an uncaught failure → 500 INTERNAL_SERVER_ERROR, without a stack trace in the body.
import { expect, test } from "bun:test";
import { buildApp } from "../../src/app.ts";
import { PlanTable } from "../../src/limits/plans.ts";
import { openDatabases } from "../../src/storage/db.ts";
import { removeDir, entry } from "../helpers/sluice.ts";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

test("an uncaught failure answers 500 INTERNAL_SERVER_ERROR with a request_id and no stack trace, and is logged", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sluice-500-"));
  const dbs = openDatabases(dir);
  const logged: Record<string, unknown>[] = [];
  const app = buildApp({ dbs, plans: new PlanTable(), adminToken: "t", log: (l) => logged.push(l) });
  await dbs.root.close(); // storage gone under a live app: every key lookup now throws
  const r = await app.handle(
    new Request("http://localhost/api/v1/workspace/logs", {
      method: "POST",
      headers: { "x-api-key": `sl_development_rw_${"a".repeat(40)}`, "content-type": "application/json" },
      body: JSON.stringify(entry()),
    }),
  );
  expect(r.status).toBe(500);
  const text = await r.text();
  const body = JSON.parse(text);
  expect(body.error_code).toBe("INTERNAL_SERVER_ERROR");
  expect(body.request_id).toBe(r.headers.get("x-request-id")!);
  expect(Object.keys(body).sort()).toEqual(["error_code", "message", "request_id"]);
  expect(text).not.toMatch(/\bat .*\(|\.ts:\d+|node_modules/); // no stack frames or source paths
  expect(logged).toHaveLength(1);
  expect(logged[0].request_id).toBe(body.request_id);
  expect(String(logged[0].stack)).toContain("at ");
  removeDir(dir);
});

test("a path id with malformed percent-encoding is an unknown id (404), never a 500", async () => {
  const { startTestSluice, WS } = await import("../helpers/sluice.ts");
  const s = startTestSluice();
  const key = await (await s.workspace()).key("development", "rw");
  for (const id of ["%", "%zz", "%E0%A4%A"]) {
    const r = await s.call("GET", `${WS}/logs/${id}`, { key });
    expect(r.status).toBe(404);
    expect((await r.json()).error_code).toBe("LOG_NOT_FOUND");
    const a = await s.admin("GET", `/workspaces/${id}`);
    expect(a.status).toBe(404);
    expect((await a.json()).error_code).toBe("VALIDATION_INVALID_REQUEST");
  }
  await s.close();
  removeDir(s.dir);
});

test("an action padded with kilobytes of white space is stored and found through the action index, not a 500", async () => {
  const { startTestSluice, WS, entry: make } = await import("../helpers/sluice.ts");
  const s = startTestSluice();
  const key = await (await s.workspace()).key("development", "rw");
  const write = async (action: string) => {
    const w = await s.call("POST", `${WS}/logs`, { key, body: make({ action }) });
    expect(w.status).toBe(201);
    return (await w.json()).id as string;
  };
  const search = async (query: string) => {
    const explained = await (await s.call("POST", `${WS}/logs/query`, { key, body: { query, explain: true } })).json();
    expect(explained.plan.index).toBe("action");
    return (await (await s.call("POST", `${WS}/logs/query`, { key, body: { query } })).json()) as { id: string; action: string }[];
  };
  const huge = `${" ".repeat(4000)}deploy.finished${" ".repeat(4000)}`; // 15 characters once trimmed: valid, stored as sent
  const hugeId = await write(huge);
  for (const query of ["action~deploy.fin", "action@finished"]) {
    const found = await search(query);
    expect(found.map((e) => e.id)).toEqual([hugeId]);
    expect(found[0].action).toBe(huge);
  }
  const long = `${" ".repeat(800)}rollout.done${" ".repeat(800)}`; // an exact query of it fits in the 2,000 characters
  const longId = await write(long);
  expect((await search(`action="${long}"`)).map((e) => e.id)).toEqual([longId]);
  await s.close();
  removeDir(s.dir);
});

test("admin ids that are no UUID, however long, are unknown ids (404)", async () => {
  const { startTestSluice } = await import("../helpers/sluice.ts");
  const s = startTestSluice();
  for (const [method, path] of [
    ["GET", "/workspaces/"],
    ["PATCH", "/workspaces/"],
    ["GET", "/workspaces/"],
    ["POST", "/keys/"],
    ["DELETE", "/keys/"],
  ] as const) {
    const long = "x".repeat(5000);
    const suffix = method === "POST" ? "/rotate" : "";
    const r = await s.admin(method, `${path}${long}${suffix}`, method === "PATCH" ? { name: "n" } : undefined);
    expect([method, path, r.status]).toEqual([method, path, 404]);
  }
  await s.close();
  removeDir(s.dir);
});

test("an HTTP/1.0 request without a Host header is answered and the server stays up", async () => {
  const { spawnServer } = await import("../helpers/process.ts");
  const { mkdtempSync, rmSync } = await import("node:fs");
  const { connect } = await import("node:net");
  const dir = mkdtempSync(join(tmpdir(), "sluice-nohost-"));
  const server = await spawnServer(dir);
  try {
    const { port } = new URL(server.base);
    const answer = await new Promise<string>((resolve) => {
      let got = "";
      const sock = connect(Number(port), "127.0.0.1", () => sock.write("GET /healthz HTTP/1.0\r\n\r\n"));
      sock.on("data", (d) => (got += d));
      sock.on("close", () => resolve(got));
      sock.on("error", () => resolve(got));
    });
    expect(answer).toContain("200");
    expect((await fetch(`${server.base}/healthz`)).status).toBe(200);
  } finally {
    server.proc.kill("SIGTERM");
    await server.exited;
    rmSync(dir, { recursive: true, force: true });
  }
});

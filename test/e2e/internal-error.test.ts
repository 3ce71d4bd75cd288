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

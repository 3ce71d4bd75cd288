// Alerts API (contract §16): channels, rules, silences over a real Sluice on a real LMDB, one test per rule of §16.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { removeDir, startTestSluice, type TestSluice, WS } from "../helpers/sluice.ts";

let s: TestSluice;
let admin: string; // scope *
let reader: string; // logs:read only
let rw: string; // logs:read and logs:write, no *
let other: string; // * in another environment
let wsId: string;

const A = `${WS}/alerts`;
const rule = (over: Record<string, unknown> = {}) => ({
  name: "errors",
  query: "level=error",
  condition: { op: ">", threshold: 5 },
  window: "5m",
  every: "1m",
  ...over,
});

beforeAll(async () => {
  s = startTestSluice();
  const ws = await s.workspace();
  wsId = ws.id;
  admin = await ws.key("development", "rw", { scopes: ["*"] });
  reader = await ws.key("development", "ro");
  rw = await ws.key("development", "rw");
  other = await ws.key("production", "rw", { scopes: ["*"] });
});
afterAll(async () => {
  await s.close();
  removeDir(s.dir);
});

async function make(path: string, body: unknown, key = admin) {
  const r = await s.call("POST", `${A}${path}`, { key, body });
  expect(r.status).toBe(201);
  return (await r.json()) as Record<string, unknown> & { id: string };
}

test("a rule answers with every default filled in", async () => {
  const r = await make("/rules", rule());
  expect(r).toMatchObject({
    name: "errors",
    query: "level=error",
    group_by: [],
    aggregate: { fn: "count", field: null },
    condition: { op: ">", threshold: 5 },
    window: "5m",
    every: "1m",
    for: "0s",
    axis: "server",
    delay: "0s",
    labels: {},
    annotations: {},
    channels: [],
    repeat_interval: "4h",
    notify_resolved: true,
    samples: 5,
    enabled: true,
  });
  const got = await s.call("GET", `${A}/rules/${r.id}`, { key: reader });
  expect(await got.json()).toEqual(r);
});

test("reading alerts needs logs:read; creating, changing and deleting needs scope *", async () => {
  for (const path of ["/rules", "/channels", "/silences", "", "/history"]) expect((await s.call("GET", `${A}${path}`, { key: reader })).status).toBe(200);
  const refused = await s.call("POST", `${A}/rules`, { key: rw, body: rule() });
  expect(refused.status).toBe(403);
  expect(((await refused.json()) as { details: { reason: string } }).details.reason).toBe("forbidden");
  const r = await make("/rules", rule({ name: "perm" }));
  expect((await s.call("PATCH", `${A}/rules/${r.id}`, { key: reader, body: { enabled: false } })).status).toBe(403);
  expect((await s.call("DELETE", `${A}/rules/${r.id}`, { key: rw })).status).toBe(403);
  expect((await s.call("GET", `${A}/rules`, {})).status).toBe(401);
  expect((await s.call("DELETE", `${A}/rules/${r.id}`, { key: admin })).status).toBe(204);
  expect((await s.call("GET", `${A}/rules/${r.id}`, { key: admin })).status).toBe(404);
});

test("alerts are bound to the key's workspace environment", async () => {
  const r = await make("/rules", rule({ name: "mine" }));
  expect((await s.call("GET", `${A}/rules/${r.id}`, { key: other })).status).toBe(404);
  const list = (await (await s.call("GET", `${A}/rules`, { key: other })).json()) as unknown[];
  expect(list).toEqual([]);
});

test("bad fields answer 400 VALIDATION_FAILED naming the field", async () => {
  const cases: [Record<string, unknown>, string][] = [
    [rule({ name: "" }), "name"],
    [rule({ condition: { op: "=>", threshold: 1 } }), "condition.op"],
    [rule({ condition: { op: ">", threshold: "1" } }), "condition.threshold"],
    [rule({ window: "5 minutes" }), "window"],
    [rule({ window: "8d" }), "window"],
    [rule({ every: "1s" }), "every"],
    [rule({ for: "x" }), "for"],
    [rule({ axis: "both" }), "axis"],
    [rule({ group_by: ["level", "action", "tag", "environment"] }), "group_by"],
    [rule({ group_by: ["user"] }), "group_by.0"],
    [rule({ aggregate: { fn: "median", field: "metadata.ms" } }), "aggregate.fn"],
    [rule({ aggregate: { fn: "sum" } }), "aggregate.field"],
    [rule({ samples: 21 }), "samples"],
    [rule({ channels: ["nope"] }), "channels.0"],
    [rule({ labels: { team: 1 } }), "labels"],
  ];
  for (const [body, field] of cases) {
    const r = await s.call("POST", `${A}/rules`, { key: admin, body });
    expect(r.status).toBe(400);
    const b = (await r.json()) as { error_code: string; details: { errors: { field: string }[] } };
    expect(b.error_code).toBe("VALIDATION_FAILED");
    expect(b.details.errors.map((e) => e.field)).toContain(field);
  }
});

test("a bad query answers the section 6 errors", async () => {
  const cases: [string, string][] = [
    ['message="open', "VALIDATION_QUERY_SYNTAX"],
    ["user@example.com", "VALIDATION_QUERY_INVALID"],
    ["timestamp>yesterday", "VALIDATION_QUERY_TIME_RANGE"],
  ];
  for (const [query, code] of cases) {
    const r = await s.call("POST", `${A}/rules`, { key: admin, body: rule({ query }) });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error_code: string }).error_code).toBe(code);
  }
});

test("at most 100 rules per workspace environment", async () => {
  const ws = await s.workspace();
  const key = await ws.key("development", "rw", { scopes: ["*"] });
  for (let i = 0; i < 100; i++) expect((await s.call("POST", `${A}/rules`, { key, body: rule({ name: `r${i}` }) })).status).toBe(201);
  const r = await s.call("POST", `${A}/rules`, { key, body: rule({ name: "one too many" }) });
  expect(r.status).toBe(400);
  expect(((await r.json()) as { error_code: string }).error_code).toBe("VALIDATION_FAILED");
});

test("channels: create 201 with its id, list is an array, PATCH, DELETE 204, secrets are write-only", async () => {
  const c = await make("/channels", {
    name: "hook",
    type: "webhook",
    config: { url: "http://127.0.0.1:9/x", secret: "s3cret", headers: { authorization: "Bearer t" } },
  });
  expect(c.id).toBeString();
  expect(c.config).toEqual({ url: "http://127.0.0.1:9/x", secret: "***", headers: { authorization: "***" } });
  const list = (await (await s.call("GET", `${A}/channels`, { key: reader })).json()) as { id: string; config: unknown }[];
  expect(Array.isArray(list)).toBe(true);
  expect(JSON.stringify(list)).not.toContain("s3cret");
  const patched = await s.call("PATCH", `${A}/channels/${c.id}`, {
    key: admin,
    body: { name: "hook2", config: { url: "http://127.0.0.1:9/y", secret: "***" } },
  });
  expect(patched.status).toBe(200);
  expect(((await patched.json()) as { name: string }).name).toBe("hook2");
  expect(s.svc.alerts.channel({ ws: wsId, env: "development" }, c.id).config.secret).toBe("s3cret"); // "***" sent back keeps it
  expect((await s.call("DELETE", `${A}/channels/${c.id}`, { key: admin })).status).toBe(204);
  expect((await s.call("GET", `${A}/channels/${c.id}`, { key: admin })).status).toBe(404);
});

test("channel configs are checked per type, naming the field", async () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ name: "x", type: "pager", config: {} }, "type"],
    [{ name: "x", type: "webhook", config: { url: "ftp://a" } }, "config.url"],
    [{ name: "x", type: "slack", config: {} }, "config.url"],
    [{ name: "x", type: "email", config: { to: [], from: "a@b", smtp: { host: "h", port: 25 } } }, "config.to"],
    [{ name: "x", type: "email", config: { to: ["a@b"], from: "a@b", smtp: { host: "h", port: 0 } } }, "config.smtp.port"],
    [{ name: "x", type: "alertmanager", config: { url: 5 } }, "config.url"],
  ];
  for (const [body, field] of cases) {
    const r = await s.call("POST", `${A}/channels`, { key: admin, body });
    expect(r.status).toBe(400);
    const b = (await r.json()) as { details: { errors: { field: string }[] } };
    expect(b.details.errors.map((e) => e.field)).toContain(field);
  }
});

test("silences: create, list, delete; match and times are checked", async () => {
  const r = await make("/rules", rule({ name: "silenced", group_by: ["level"] }));
  const sil = await make("/silences", {
    rule_id: r.id,
    match: { level: "error" },
    starts_at: "2026-11-27T10:00:00Z",
    ends_at: "2026-11-27T12:00:00Z",
    comment: "deploy",
  });
  const list = (await (await s.call("GET", `${A}/silences`, { key: reader })).json()) as { id: string }[];
  expect(list.map((x) => x.id)).toContain(sil.id);
  const bad = await s.call("POST", `${A}/silences`, { key: admin, body: { starts_at: "2026-11-27T12:00:00Z", ends_at: "2026-11-27T10:00:00Z", comment: "x" } });
  expect(bad.status).toBe(400);
  expect(JSON.stringify(await bad.json())).toContain('"field":"ends_at"');
  const stray = await s.call("POST", `${A}/silences`, {
    key: admin,
    body: { rule_id: r.id, match: { action: "x" }, starts_at: "2026-11-27T10:00:00Z", ends_at: "2026-11-27T12:00:00Z", comment: "x" },
  });
  expect(stray.status).toBe(400);
  expect(JSON.stringify(await stray.json())).toContain('"field":"match.action"');
  expect((await s.call("DELETE", `${A}/silences/${sil.id}`, { key: reader })).status).toBe(403);
  expect((await s.call("DELETE", `${A}/silences/${sil.id}`, { key: admin })).status).toBe(204);
});

test("rules, channels and silences survive a restart", async () => {
  const c = await make("/channels", { name: "kept", type: "slack", config: { url: "http://127.0.0.1:9/slack" } });
  const r = await make("/rules", rule({ name: "kept", channels: [c.id] }));
  await s.close();
  s = startTestSluice(s.dir);
  expect((await (await s.call("GET", `${A}/rules/${r.id}`, { key: admin })).json()) as unknown).toEqual(r);
  expect(((await (await s.call("GET", `${A}/channels/${c.id}`, { key: admin })).json()) as { name: string }).name).toBe("kept");
});

test("the OpenAPI document describes the alert routes", async () => {
  const doc = (await (await s.call("GET", `${WS}/openapi.json`)).json()) as { paths: Record<string, Record<string, { summary: string }>> };
  const alertPaths = Object.keys(doc.paths).filter((p) => p.includes("/alerts"));
  expect(alertPaths.length).toBeGreaterThanOrEqual(9);
  expect(doc.paths[`${A}/rules`].post.summary).toContain("Create an alert rule");
  expect(doc.paths[`${A}/rules/preview`].post.summary).toContain("Replay a rule");
});

test("the admin API takes the same routes under /api/v1/admin/workspaces/{id}/environments/{env}/…", async () => {
  const base = `/workspaces/${wsId}/environments/development/alerts`;
  const made = await s.admin("POST", `${base}/rules`, rule({ name: "by admin" }));
  expect(made.status).toBe(201);
  const { id } = (await made.json()) as { id: string };
  expect((await s.call("GET", `${A}/rules/${id}`, { key: reader })).status).toBe(200); // the key of that environment sees it
  expect((await s.call("GET", `/api/v1/admin${base}/rules/${id}`, { headers: { authorization: "Bearer wrong" } })).status).toBe(401);
  expect((await s.admin("GET", `/workspaces/nope/environments/development/alerts/rules`)).status).toBe(404);
  expect((await s.admin("GET", `/workspaces/${wsId}/environments/moon/alerts/rules`)).status).toBe(400);
  expect((await s.admin("DELETE", `/workspaces/${wsId}/environments/development/alerts/rules/${id}`)).status).toBe(204);
});

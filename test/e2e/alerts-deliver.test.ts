// Alert notices (contract §16) from a real Sluice to loopback receivers: webhook (Alertmanager v4 body, HMAC), Slack,
// Alertmanager v2, email over SMTP (smtp-server), retries with backoff, silences, exactly one firing and one resolved
// notice per incident. The test moves the server's clock and runs the evaluator's and the deliverer's own passes.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { httpReceiver, smtpReceiver } from "../helpers/receivers.ts";
import { removeDir, startTestSluice, type TestSluice, WS } from "../helpers/sluice.ts";

const A = `${WS}/alerts`;
const BASE = Date.parse("2026-11-27T10:00:00.000Z");
let now = BASE;
let s: TestSluice;
let key: string;
const stops: (() => unknown)[] = [];

beforeAll(async () => {
  s = startTestSluice(undefined, { clock: () => now, alertMinEveryMs: 1000, externalUrl: () => "https://sluice.example" });
});
afterAll(async () => {
  await s.close();
  removeDir(s.dir);
  for (const stop of stops) await stop();
});

async function fresh() {
  key = await (await s.workspace()).key("development", "rw", { scopes: ["*"] });
}

async function post(path: string, body: unknown) {
  const r = await s.call("POST", `${A}${path}`, { key, body });
  expect(r.status).toBe(201);
  return ((await r.json()) as { id: string }).id;
}

async function write(entries: Record<string, unknown>[], atMs: number) {
  now = atMs;
  const body = entries.map((e) => ({ action: "checkout", level: "error", clientTimestamp: new Date(atMs).toISOString(), ...e }));
  expect((await s.call("POST", `${WS}/logs/bulk`, { key, body })).status).toBe(201);
}

/** at sets the clock, runs a due evaluation and sends what is due, as the server's timers do. */
async function at(ms: number) {
  now = ms;
  await s.svc.evaluator.tick();
  s.svc.deliverer.pass();
  await s.svc.deliverer.idle();
}

const receiver = (statuses: number[] = []) => {
  const r = httpReceiver(() => now, statuses);
  stops.push(r.stop);
  return r;
};
const rule = (channels: string[], over: Record<string, unknown> = {}) => ({
  name: "Checkout errors",
  query: "level=error",
  condition: { op: ">", threshold: 0 },
  window: "1m",
  every: "1m",
  channels,
  labels: { team: "shop" },
  annotations: { summary: "checkout is failing" },
  ...over,
});
const history = async (ruleId: string) =>
  (await (await s.call("GET", `${A}/history?rule_id=${ruleId}`, { key })).json()) as {
    from_state: string;
    to_state: string;
    deliveries: { channel_id: string; status: string; attempts: number; error: string | null }[];
  }[];

test("webhook: Alertmanager webhook v4 body with value and samples, signed with X-Sluice-Signature", async () => {
  await fresh();
  const hook = receiver();
  const ch = await post("/channels", { name: "hook", type: "webhook", config: { url: `${hook.url}/in`, secret: "s3cret", headers: { "x-team": "shop" } } });
  const t = BASE + 10 * 60_000;
  await write([{ message: "timeout" }], t - 5000);
  await write([{ message: "card declined", metadata: { order: 1 } }], t - 2000);
  const id = await post("/rules", rule([ch], { samples: 1 }));
  await at(t);
  expect(hook.got).toHaveLength(1);
  const { headers, body } = hook.got[0];
  expect(headers["x-sluice-signature"]).toBe(`sha256=${createHmac("sha256", "s3cret").update(body).digest("hex")}`);
  expect(headers["x-team"]).toBe("shop");
  const b = JSON.parse(body);
  expect(b).toMatchObject({
    version: "4",
    status: "firing",
    receiver: "hook",
    groupLabels: { alertname: "Checkout errors" },
    commonLabels: { alertname: "Checkout errors", team: "shop" },
    commonAnnotations: { summary: "checkout is failing" },
    externalURL: "https://sluice.example",
  });
  expect(b.alerts).toHaveLength(1);
  const a = b.alerts[0];
  expect(a).toMatchObject({ status: "firing", labels: { alertname: "Checkout errors", team: "shop" }, startsAt: new Date(t).toISOString(), value: 2 });
  expect(a.endsAt).toBe("0001-01-01T00:00:00Z");
  expect(a.fingerprint).toMatch(/^[0-9a-f]{16}$/);
  expect(a.samples).toHaveLength(1);
  expect(Object.keys(a.samples[0]).sort()).toEqual(["action", "id", "level", "message", "server_timestamp"]);
  expect(a.samples[0]).toMatchObject({ message: "card declined", server_timestamp: new Date(t - 2000).toISOString(), level: "error", action: "checkout" }); // the newest
  const link = new URL(a.generatorURL);
  expect(link.origin + link.pathname).toBe("https://sluice.example/ui");
  expect(Object.fromEntries(link.searchParams)).toEqual({
    q: "level=error",
    range: "custom",
    from: new Date(t - 60_000).toISOString(),
    to: new Date(t).toISOString(),
  });
  expect((await history(id))[0].deliveries).toEqual([{ channel_id: ch, status: "delivered", attempts: 1, error: null }]);
});

test("exactly one firing notice per incident, again only after repeat_interval, and one resolved notice", async () => {
  await fresh();
  const hook = receiver();
  const ch = await post("/channels", { name: "hook", type: "webhook", config: { url: hook.url } });
  const t = BASE + 20 * 60_000;
  await post("/rules", rule([ch], { window: "10m", repeat_interval: "5m" }));
  await write([{}], t - 1000);
  for (let k = 0; k <= 6; k++) await at(t + k * 60_000); // fires at t, still firing for 6 minutes
  await at(t + 10 * 60_000); // the entry left the window
  await at(t + 11 * 60_000);
  const statuses = hook.got.map((g) => [JSON.parse(g.body).status, (g.at - t) / 60_000]);
  expect(statuses).toEqual([
    ["firing", 0],
    ["firing", 5],
    ["resolved", 10],
  ]);
  const resolved = JSON.parse(hook.got[2].body).alerts[0];
  expect(resolved.endsAt).toBe(new Date(t + 10 * 60_000).toISOString());
});

test("notify_resolved false sends no resolved notice", async () => {
  await fresh();
  const hook = receiver();
  const ch = await post("/channels", { name: "hook", type: "webhook", config: { url: hook.url } });
  const t = BASE + 40 * 60_000;
  await post("/rules", rule([ch], { notify_resolved: false }));
  await write([{}], t - 1000);
  await at(t);
  await at(t + 60_000);
  expect(hook.got.map((g) => JSON.parse(g.body).status)).toEqual(["firing"]);
});

test("a failed delivery (5xx) is retried with backoff, at least 3 attempts within a minute: 500, 500, 200 is delivered", async () => {
  await fresh();
  const hook = receiver([500, 500]);
  const ch = await post("/channels", { name: "flaky", type: "webhook", config: { url: hook.url } });
  const t = BASE + 50 * 60_000;
  const id = await post("/rules", rule([ch]));
  await write([{}], t - 1000);
  await at(t);
  for (let ms = 500; ms < 60_000 && hook.got.length < 3; ms += 500) await at(t + ms);
  expect(hook.got).toHaveLength(3);
  expect(hook.got[2].at - hook.got[0].at).toBeLessThanOrEqual(60_000);
  expect(new Set(hook.got.map((g) => g.body)).size).toBe(1); // the same notice each time
  expect((await history(id))[0].deliveries[0]).toEqual({ channel_id: ch, status: "delivered", attempts: 3, error: null });
});

test("a 4xx answer is not retried: the delivery is failed with the status in its error", async () => {
  await fresh();
  const hook = receiver([404]);
  const ch = await post("/channels", { name: "gone", type: "webhook", config: { url: hook.url } });
  const t = BASE + 60 * 60_000;
  const id = await post("/rules", rule([ch]));
  await write([{}], t - 1000);
  await at(t);
  await at(t + 30_000);
  expect(hook.got).toHaveLength(1);
  expect((await history(id))[0].deliveries[0]).toMatchObject({ status: "failed", attempts: 1, error: "the receiver answered 404" });
});

test("slack: an incoming-webhook body {text, blocks}", async () => {
  await fresh();
  const slack = receiver();
  const ch = await post("/channels", { name: "slack", type: "slack", config: { url: `${slack.url}/services/T/B/X` } });
  const t = BASE + 70 * 60_000;
  await post("/rules", rule([ch], { group_by: ["action"] }));
  await write([{ message: "card declined" }], t - 1000);
  await at(t);
  expect(slack.got).toHaveLength(1);
  const b = JSON.parse(slack.got[0].body);
  expect(b.text).toBe("[FIRING] Checkout errors {action=checkout}");
  expect(b.blocks[0].type).toBe("section");
  expect(b.blocks[0].text.text).toContain("card declined");
});

test("alertmanager: posts to <url>/api/v2/alerts, endsAt ahead while firing and the resolved time once resolved", async () => {
  await fresh();
  const am = receiver();
  const ch = await post("/channels", { name: "am", type: "alertmanager", config: { url: `${am.url}/` } });
  const t = BASE + 80 * 60_000;
  await post("/rules", rule([ch], { group_by: ["level"] }));
  await write([{}], t - 1000);
  await at(t);
  await write([{}], t + 59_000);
  await at(t + 60_000); // still firing: re-posted with endsAt ahead
  await at(t + 120_000);
  expect(am.got.map((g) => g.path)).toEqual(["/api/v2/alerts", "/api/v2/alerts", "/api/v2/alerts"]);
  const [fire, again, resolve] = am.got.map((g) => JSON.parse(g.body));
  expect(fire[0].labels).toEqual({ alertname: "Checkout errors", team: "shop", level: "error" });
  expect(Date.parse(fire[0].endsAt)).toBeGreaterThan(t);
  expect(again[0].startsAt).toBe(fire[0].startsAt);
  expect(Date.parse(again[0].endsAt)).toBeGreaterThan(t + 60_000);
  expect(resolve[0].endsAt).toBe(new Date(t + 120_000).toISOString());
});

test("email: subject [FIRING] <name> <group> / [RESOLVED] …, with the samples and the link, over SMTP", async () => {
  await fresh();
  const smtp = await smtpReceiver();
  stops.push(smtp.stop);
  const ch = await post("/channels", {
    name: "mail",
    type: "email",
    config: { to: ["ops@example.com"], from: "sluice@example.com", smtp: { host: "127.0.0.1", port: smtp.port } },
  });
  const t = BASE + 90 * 60_000;
  await post("/rules", rule([ch], { group_by: ["level"] }));
  await write([{ message: "card declined" }], t - 1000);
  await at(t);
  await at(t + 60_000);
  expect(smtp.got).toHaveLength(2);
  expect(smtp.got[0].to).toEqual(["ops@example.com"]);
  expect(smtp.got[0].raw).toContain("Subject: [FIRING] Checkout errors {level=error}");
  expect(smtp.got[0].raw).toContain("card declined");
  expect(smtp.got[0].raw).toContain("https://sluice.example/ui?q=");
  expect(smtp.got[1].raw).toContain("Subject: [RESOLVED] Checkout errors {level=error}");
});

test("silences mute notifications (rule and match), while states still change", async () => {
  await fresh();
  const hook = receiver();
  const ch = await post("/channels", { name: "hook", type: "webhook", config: { url: hook.url } });
  const t = BASE + 100 * 60_000;
  const id = await post("/rules", rule([ch], { query: "", group_by: ["level"] }));
  await post("/silences", {
    rule_id: id,
    match: { level: "warn" },
    starts_at: new Date(t - 60_000).toISOString(),
    ends_at: new Date(t + 60_000).toISOString(),
    comment: "known",
  });
  await write([{ level: "warn" }, { level: "error" }], t - 1000);
  await at(t);
  expect(hook.got.map((g) => JSON.parse(g.body).alerts[0].labels.level)).toEqual(["error"]);
  const states = ((await (await s.call("GET", A, { key })).json()) as { group: { level: string }; state: string }[])
    .map((a) => `${a.group.level}:${a.state}`)
    .sort();
  expect(states).toEqual(["error:firing", "warn:firing"]);
});

test("POST /alerts/channels/{id}/test sends one test notification now", async () => {
  await fresh();
  const ok = receiver();
  const bad = receiver([503]);
  const good = await post("/channels", { name: "ok", type: "webhook", config: { url: ok.url } });
  const failing = await post("/channels", { name: "bad", type: "slack", config: { url: bad.url } });
  const r1 = await s.call("POST", `${A}/channels/${good}/test`, { key });
  expect(await r1.json()).toEqual({ delivered: true, status: 200, attempts: 1 });
  expect(JSON.parse(ok.got[0].body).alerts[0].labels.alertname).toBe("SluiceTestNotification");
  const r2 = await s.call("POST", `${A}/channels/${failing}/test`, { key });
  expect(await r2.json()).toEqual({ delivered: false, status: 503, attempts: 1, error: "the receiver answered 503" });
});

test("disabling or deleting a firing rule ends its incidents with one resolved notice each; a disabled rule is not evaluated", async () => {
  await fresh();
  const hook = receiver();
  const ch = await post("/channels", { name: "hook", type: "webhook", config: { url: hook.url } });
  const t = BASE + 110 * 60_000;
  const a = await post("/rules", rule([ch], { name: "to disable", window: "10m" }));
  const b = await post("/rules", rule([ch], { name: "to delete", window: "10m" }));
  await write([{}], t - 1000);
  await at(t);
  expect(hook.got.map((g) => JSON.parse(g.body).status)).toEqual(["firing", "firing"]);
  expect((await s.call("PATCH", `${A}/rules/${a}`, { key, body: { enabled: false } })).status).toBe(200);
  expect((await s.call("DELETE", `${A}/rules/${b}`, { key })).status).toBe(204);
  await at(t + 60_000); // sends what retiring decided; evaluates nothing
  const got = hook.got.slice(2).map((g) => [JSON.parse(g.body).status, JSON.parse(g.body).alerts[0].labels.alertname]);
  expect(got.sort()).toEqual([
    ["resolved", "to delete"],
    ["resolved", "to disable"],
  ]);
  expect(((await (await s.call("GET", A, { key })).json()) as unknown[]).length).toBe(0);
  expect((await history(a)).map((h) => `${h.from_state}→${h.to_state}`)).toEqual(["inactive→firing", "firing→inactive"]);
});

// Alerts on a cluster (contract §16 with §13): channels, rules and silences made through one node are answered by
// every node, and each rule is evaluated by exactly one live node although every node holds a copy of its partition:
// a loopback webhook receiver gets exactly one firing and one resolved notice. The nodes run on the real clock, rules
// every second (alertMinEveryMs), on 3 real nats-server processes.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestCluster, type TestCluster } from "../helpers/cluster.ts";
import { httpReceiver } from "../helpers/receivers.ts";
import { entry, WS } from "../helpers/sluice.ts";
import { partitionOf } from "../../src/cluster/names.ts";

const A = `${WS}/alerts`;
let c: TestCluster;
let key: string;
const hook = httpReceiver();
/** which node evaluated which rule at which instant, as each node's copy of the workspace's partition ran it */
const evaluations: { node: string; rule: string; at: number }[] = [];

beforeAll(async () => {
  c = await startTestCluster({ copies: 3, app: { alertMinEveryMs: 1000 } });
  const ws = await c.workspace();
  key = await ws.key("production", "rw", { scopes: ["*"] });
  for (const node of c.nodes) {
    const copy = node.copyOf(partitionOf(ws.id, node.settings.partitions));
    if (!copy) throw new Error(`node ${node.options.nodeId} holds no copy of the workspace's partition, as copies: 3 should make it`);
    const evaluator = copy.sluice.evaluator;
    const evaluate = evaluator.evaluate.bind(evaluator);
    evaluator.evaluate = (t, rule, at) => {
      evaluations.push({ node: node.options.nodeId, rule: rule.id, at });
      return evaluate(t, rule, at);
    };
  }
}, 90_000);
afterAll(async () => {
  await c?.close();
  hook.stop();
}, 30_000);

const notices = () => hook.got.map((g) => JSON.parse(g.body).status as string);

/** until waits for a condition, checking every 50 ms, at most `ms`. */
async function until(what: string, ok: () => boolean, ms: number) {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; received: ${JSON.stringify(notices())}`);
    await Bun.sleep(50);
  }
}

async function made(i: number, path: string, body: unknown): Promise<Record<string, unknown>> {
  const r = await c.call(i, "POST", `${A}${path}`, { key, body });
  expect(r.status).toBe(201);
  return (await r.json()) as Record<string, unknown>;
}

test("alert records made through one node are answered by every node", async () => {
  const channel = await made(1, "/channels", { name: "everywhere", type: "webhook", config: { url: hook.url, secret: "s3cret" } });
  const rule = await made(2, "/rules", {
    name: "quiet",
    query: "action=never.written",
    condition: { op: ">", threshold: 0 },
    window: "1m",
    every: "1s",
    channels: [channel.id],
  });
  const silence = await made(0, "/silences", { rule_id: rule.id, starts_at: "2026-11-27T00:00:00Z", ends_at: "2026-11-28T00:00:00Z", comment: "c" });
  for (const i of [0, 1, 2]) {
    const channels = (await (await c.call(i, "GET", `${A}/channels`, { key })).json()) as Record<string, unknown>[];
    expect(channels.map((x) => x.id)).toEqual([channel.id]);
    expect((channels[0].config as Record<string, unknown>).secret).toBe("***");
    expect(await (await c.call(i, "GET", `${A}/rules/${rule.id}`, { key })).json()).toEqual(rule);
    expect(((await (await c.call(i, "GET", `${A}/silences`, { key })).json()) as { id: string }[]).map((x) => x.id)).toEqual([silence.id as string]);
  }
  expect((await c.call(1, "DELETE", `${A}/silences/${silence.id}`, { key })).status).toBe(204);
  expect((await c.call(2, "DELETE", `${A}/rules/${rule.id}`, { key })).status).toBe(204);
  for (const i of [0, 1, 2]) {
    expect((await c.call(i, "GET", `${A}/rules/${rule.id}`, { key })).status).toBe(404);
    expect(await (await c.call(i, "GET", `${A}/silences`, { key })).json()).toEqual([]);
  }
}, 30_000);

test("a rule is evaluated by exactly one node: one firing and one resolved notice, the history the same on every node", async () => {
  const channel = await made(0, "/channels", { name: "hook", type: "webhook", config: { url: hook.url } });
  hook.got.length = 0;
  const rule = await made(1, "/rules", {
    name: "errors",
    query: "level=error",
    condition: { op: ">", threshold: 0 },
    window: "3s",
    every: "1s",
    channels: [channel.id],
  });
  let writing = true;
  const writer = (async () => {
    for (let n = 0; writing; n++) {
      const r = await c.call(n % 3, "POST", `${WS}/logs`, { key, body: entry({ action: "pay", level: "error", clientTimestamp: new Date().toISOString() }) });
      expect(r.status).toBe(201);
      await Bun.sleep(200);
    }
  })();
  await until("the firing notice", () => notices().length >= 1, 30_000);
  await Bun.sleep(4000); // four more evaluations while it still fires: no node announces it again
  expect(notices()).toEqual(["firing"]);
  const alerts = (await (await c.call(2, "GET", A, { key })).json()) as { rule_id: string; state: string }[];
  expect(alerts.map((a) => [a.rule_id, a.state])).toEqual([[rule.id as string, "firing"]]);
  writing = false;
  await writer;
  await until("the resolved notice", () => notices().length >= 2, 20_000);
  await Bun.sleep(3000); // nothing more comes
  expect(notices()).toEqual(["firing", "resolved"]);
  const histories = await Promise.all(
    [0, 1, 2].map(async (i) => (await (await c.call(i, "GET", `${A}/history?rule_id=${rule.id}`, { key })).json()) as Record<string, unknown>[]),
  );
  const moves = histories[0].map((t) => `${t.from_state}→${t.to_state}`);
  expect(moves).toEqual(["inactive→firing", "firing→inactive"]);
  for (const h of histories) expect(h).toEqual(histories[0]);
  const delivered = histories[0].filter((t) => (t.deliveries as { status: string }[]).some((d) => d.status === "delivered"));
  expect(delivered.length).toBe(2);
  // each instant once, all on one node: the cluster did not change meanwhile
  const ran = evaluations.filter((e) => e.rule === rule.id);
  expect(ran.length).toBeGreaterThan(5);
  expect(new Set(ran.map((e) => e.node)).size).toBe(1);
  expect(new Set(ran.map((e) => e.at)).size).toBe(ran.length);
}, 90_000);

test("a preview through any node reads the entries of the workspace's partition", async () => {
  const now = Date.now();
  const body = {
    rule: { name: "p", query: "level=error", condition: { op: ">", threshold: 0 }, window: "1m", every: "1m" },
    from: new Date(now - 10 * 60_000).toISOString(),
    to: new Date(now + 60_000).toISOString(),
  };
  for (const i of [0, 1, 2]) {
    const r = await c.call(i, "POST", `${A}/rules/preview`, { key, body });
    expect(r.status).toBe(200);
    const p = (await r.json()) as { incidents: unknown[]; evaluations: { groups: { value: number }[] }[] };
    expect(p.evaluations.some((e) => e.groups.some((g) => g.value > 0))).toBe(true);
    expect(p.incidents.length).toBeGreaterThan(0);
  }
}, 30_000);

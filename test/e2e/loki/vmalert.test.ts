// Contract §17 with a real rule evaluator: Debian's vmalert (victoria-metrics 1.79) evaluates LogQL alerting rules
// against <base>/loki (it posts /loki/api/v1/query with the parameters in the URL) and notifies a receiver here.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Server, Subprocess } from "bun";
import { entry, removeDir, WS } from "../../helpers/sluice.ts";
import { listen, type Listening, until } from "../../helpers/shippers.ts";

let l: Listening;
let dir: string;
let receiver: Server<undefined>;
let vmalert: Subprocess<"ignore", "pipe", "pipe">;
let output = "";
const alerts: { labels: Record<string, string> }[] = [];

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

beforeAll(async () => {
  l = listen({ ipRatePerMinute: -1 });
  dir = mkdtempSync(join(tmpdir(), "sluice-vmalert-"));
  receiver = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      if (request.method === "POST") alerts.push(...((await request.json()) as { labels: Record<string, string> }[]));
      return new Response("{}", { headers: { "content-type": "application/json" } });
    },
  });
}, 30_000);
afterAll(async () => {
  vmalert?.kill("SIGTERM");
  await vmalert?.exited;
  await receiver.stop(true);
  await l.stop();
  removeDir(l.s.dir);
  rmSync(dir, { recursive: true, force: true });
});

test("vmalert evaluates LogQL alerting rules through /loki/api/v1/query: the one over its threshold fires, the other does not", async () => {
  const key = await (await l.s.workspace()).key("production", "rw");
  const at = new Date(Date.now() - 60_000).toISOString();
  const r = await l.s.call("POST", `${WS}/logs/bulk`, {
    key,
    body: [1, 2, 3].map((i) => entry({ action: "pay", level: "error", message: `declined ${i}`, clientTimestamp: at })),
  });
  expect(r.status).toBe(201);
  writeFileSync(
    join(dir, "rules.yml"),
    `groups:
  - name: sluice
    interval: 1s
    rules:
      - alert: PaymentsFailing
        expr: 'sum by (action) (count_over_time({level="error"} |= "declined" [10m])) > 2'
      - alert: NeverFires
        expr: 'sum(count_over_time({level="fatal"}[10m])) > 0'
`,
  );
  const port = await freePort();
  vmalert = Bun.spawn(
    [
      "vmalert",
      `-rule=${join(dir, "rules.yml")}`,
      `-datasource.url=${l.base}/loki`,
      "-datasource.basicAuth.username=vmalert",
      `-datasource.basicAuth.password=${key}`,
      `-notifier.url=http://127.0.0.1:${receiver.port}`,
      `-httpListenAddr=127.0.0.1:${port}`,
      "-rule.validateExpressions=false",
      "-evaluationInterval=1s",
    ],
    { stdin: "ignore", stdout: "pipe", stderr: "pipe" },
  );
  void new Response(vmalert.stderr).text().then((t) => (output += t));
  void new Response(vmalert.stdout).text().then((t) => (output += t));
  const fired = await until(async () => alerts.find((a) => a.labels.alertname === "PaymentsFailing"), 20_000).catch(() => undefined);
  expect({ fired: fired?.labels, output: fired ? "" : output.slice(-2000) }).toEqual({
    fired: { alertname: "PaymentsFailing", alertgroup: "sluice", action: "pay" },
    output: "",
  });
  // vmalert's own view: the rule that matched nothing is inactive, not failing
  const groups = (await (await fetch(`http://127.0.0.1:${port}/api/v1/rules`)).json()) as {
    data: { groups: { rules: { name: string; lastError: string }[] }[] };
  };
  const rules = groups.data.groups.flatMap((g) => g.rules);
  expect(rules.map((x) => [x.name, x.lastError]).sort()).toEqual([
    ["NeverFires", ""],
    ["PaymentsFailing", ""],
  ]);
  expect(alerts.some((a) => a.labels.alertname === "NeverFires")).toBe(false);
}, 40_000);

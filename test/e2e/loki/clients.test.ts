// Contract §17 with real clients: entries pushed by winston-loki and pino-loki (contract §11) read back through the
// npm Loki client @myunisoft/loki: labels, label values, lines and their order. (Its series() sends no credentials:
// series is read directly.)
import { afterAll, beforeAll, expect, test } from "bun:test";
import { GrafanaApi } from "@myunisoft/loki";
import pino from "pino";
import { pinoLoki } from "pino-loki";
import winston from "winston";
import LokiTransport from "winston-loki";
import { removeDir } from "../../helpers/sluice.ts";
import { listen, type Listening, storedEntries, until } from "../../helpers/shippers.ts";

let l: Listening;
beforeAll(() => {
  l = listen({ ipRatePerMinute: -1 });
});
afterAll(async () => {
  await l.stop();
  removeDir(l.s.dir);
});

test("pushed by winston-loki and pino-loki, read back with @myunisoft/loki: labels as sent, lines newest first", async () => {
  const key = await (await l.s.workspace()).key("development", "rw");
  const T0 = Date.now() - 60_000;
  const transport = new LokiTransport({ host: l.base, basicAuth: `w:${key}`, labels: { app: "shop" }, json: true, batching: false, gracefulShutdown: false });
  const logger = winston.createLogger({ transports: [transport] });
  logger.error("disk full", { timestamp: new Date(T0).toISOString() });
  logger.warn("slow disk", { timestamp: new Date(T0 + 1000).toISOString() });
  const stream = pinoLoki({ host: l.base, basicAuth: { username: "p", password: key }, batching: false, labels: { service_name: "billing" } });
  pino({ base: {} }, stream).info("invoice sent");
  await until(async () => ((await storedEntries(l.s, key)).length >= 3 ? true : undefined));
  logger.close();

  const api = new GrafanaApi({ remoteApiURL: l.base, authentication: { type: "bearer", token: key } });
  const labels = await api.Loki.labels({ start: `${T0 - 60_000}000000`, end: `${Date.now() + 1000}000000` });
  expect(labels).toEqual(expect.arrayContaining(["app", "service_name", "level", "action", "environment"]));
  expect(await api.Loki.labelValues("app", { start: `${T0 - 60_000}000000`, end: `${Date.now() + 1000}000000` })).toEqual(["shop"]);
  const shop = await api.Loki.queryRangeStream('{app="shop"}', { start: `${T0 - 60_000}000000`, end: `${Date.now() + 1000}000000`, limit: 10 });
  const lines = shop.streams.flatMap((st) => st.values.map((v) => String(v[1])));
  expect(lines.map((line) => line.split(" {")[0])).toEqual(["slow disk", "disk full"]); // newest first
  expect(shop.streams.every((st) => st.labels.app === "shop" && st.labels.service_name === "shop")).toBe(true);
  const billing = await api.Loki.queryRange('{service_name="billing"} |= "invoice"', { start: `${T0 - 60_000}000000`, end: `${Date.now() + 1000}000000` });
  expect(billing.logs.map(String)).toEqual(["invoice sent"]);
  const series = await fetch(`${l.base}/loki/api/v1/series?match[]=${encodeURIComponent('{app="shop"}')}&start=${T0 - 60_000}000000`, {
    headers: { authorization: `Bearer ${key}` },
  });
  const sets = ((await series.json()) as { data: Record<string, string>[] }).data;
  expect(sets.map((s) => s.level).sort()).toEqual(["error", "warn"]);
});

// Contract §11, Grafana Loki push: winston-loki (snappy protobuf and JSON) and pino-loki send to POST /loki/api/v1/push.
import { afterAll, beforeAll, expect, test } from "bun:test";
import pino from "pino";
import { pinoLoki } from "pino-loki";
import winston from "winston";
import LokiTransport from "winston-loki";
import { removeDir } from "../../helpers/sluice.ts";
import { listen, type Listening, storedEntries, until } from "../../helpers/shippers.ts";

let l: Listening;
beforeAll(() => {
  l = listen();
});
afterAll(async () => {
  await l.stop();
  removeDir(l.s.dir);
});

const T0 = Date.parse("2026-11-22T10:00:00.123Z");

for (const json of [false, true]) {
  test(`winston-loki (${json ? "JSON" : "protobuf with snappy"}): labels to context, level label, the line as message, the entry's timestamp`, async () => {
    const key = await (await l.s.workspace()).key("development", "rw");
    const transport = new LokiTransport({
      host: l.base,
      basicAuth: `winston:${key}`,
      labels: { app: "shop", env: "dev" },
      json,
      batching: false,
      gracefulShutdown: false,
      replaceTimestamp: false,
    });
    // the transport falls back to JSON when it cannot load snappy: make sure the protobuf run is one
    expect((transport as unknown as { batcher: { contentType: string } }).batcher.contentType).toBe(json ? "application/json" : "application/x-protobuf");
    const logger = winston.createLogger({ transports: [transport] });
    logger.error("disk full", { timestamp: new Date(T0).toISOString(), labels: { job: "nightly" } });
    logger.warn("slow", { timestamp: new Date(T0 + 1).toISOString() });
    const stored = await until(async () => {
      const e = await storedEntries(l.s, key);
      return e.length >= 2 ? e : undefined;
    });
    // winston-loki's line is the message and then the rest of the log as JSON
    const byMessage = Object.fromEntries(stored.map((e) => [e.message?.split(" ")[0], e]));
    expect(byMessage.disk).toMatchObject({
      action: "shop",
      level: "error",
      client_timestamp: "2026-11-22T10:00:00.123Z",
      context: { app: "shop", env: "dev", job: "nightly", level: "error" },
    });
    expect(byMessage.disk.message).toBe('disk full {"level":"error"}');
    expect(byMessage.slow).toMatchObject({ action: "shop", level: "warn", client_timestamp: "2026-11-22T10:00:00.124Z" });
    logger.close();
  });
}

test("pino-loki: a JSON line's fields to metadata, msg as message, pino's level, structured metadata", async () => {
  const key = await (await l.s.workspace()).key("development", "rw");
  const stream = pinoLoki({ host: l.base, basicAuth: { username: "pino", password: key }, batching: false, labels: { service_name: "billing" } });
  const logger = pino({ base: { hostname: "web-1" } }, stream);
  logger.info({ order: { id: 7 }, "http.status": 502, meta: { trace: "abc" } }, "upstream failed");
  logger.fatal("gone");
  const stored = await until(async () => {
    const e = await storedEntries(l.s, key);
    return e.length >= 2 ? e : undefined;
  });
  const byMessage = Object.fromEntries(stored.map((e) => [e.message, e]));
  expect(byMessage["upstream failed"]).toMatchObject({
    action: "billing",
    level: "info",
    context: { service_name: "billing", hostname: "web-1", level: "info" },
    metadata: { order: { id: 7 }, http: { status: 502 }, level: 30, msg: "upstream failed", trace: "abc" },
  });
  expect(byMessage.gone).toMatchObject({ action: "billing", level: "fatal" });
});

test("Loki partial success: the entries that pass are stored, the answer is 400 naming each rejected entry and why", async () => {
  const ws = await l.s.workspace("free");
  const key = await ws.key("development", "rw");
  const ns = `${T0}000000`;
  const body = {
    streams: [
      {
        stream: { job: "api" },
        values: [
          [ns, "fits"],
          [ns, "x".repeat(800)],
          [ns, "also fits", { trace_id: "t1" }],
        ],
      },
    ],
  };
  const r = await fetch(`${l.base}/loki/api/v1/push`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });
  expect(r.status).toBe(400);
  const text = await r.text();
  expect(text).toContain("entry 1 rejected");
  expect(text).toContain("700");
  const stored = await storedEntries(l.s, key);
  expect(stored.map((e) => [e.action, e.message, e.metadata])).toEqual([
    ["api", "fits", null],
    ["api", "also fits", { trace_id: "t1" }],
  ]);
  const all = await fetch(`${l.base}/loki/api/v1/push`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": key },
    body: JSON.stringify({ streams: [{ stream: { job: "api" }, values: [[ns, "ok"]] }] }),
  });
  expect(all.status).toBe(204);
});

// Contract §11, OpenTelemetry OTLP/HTTP: the real OTel SDK's protobuf and JSON log exporters send to POST /otlp/v1/logs.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { SeverityNumber } from "@opentelemetry/api";
import { OTLPLogExporter as JsonExporter } from "@opentelemetry/exporter-logs-otlp-http";
import { OTLPLogExporter as ProtoExporter } from "@opentelemetry/exporter-logs-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchLogRecordProcessor, LoggerProvider, type LogRecordExporter } from "@opentelemetry/sdk-logs";
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

/** emitAll logs the records through a provider with `exporter` and flushes them. */
async function emitAll(exporter: LogRecordExporter, emit: (logger: ReturnType<LoggerProvider["getLogger"]>) => void) {
  const provider = new LoggerProvider({
    resource: resourceFromAttributes({ "service.name": "checkout", "deployment.environment": "test" }),
    processors: [new BatchLogRecordProcessor({ exporter })],
  });
  emit(provider.getLogger("payments", "1.2.3"));
  await provider.forceFlush();
  await provider.shutdown();
}

const T0 = Date.parse("2026-11-22T10:00:00.123Z");

for (const [encoding, make] of [
  ["protobuf", (url: string, key: string) => new ProtoExporter({ url, headers: { Authorization: `Bearer ${key}` } })],
  ["JSON", (url: string, key: string) => new JsonExporter({ url, headers: { Authorization: `Bearer ${key}` } })],
] as const) {
  test(`OTLP ${encoding} from the OTel SDK: the mapping of action, level, message, timestamps, context and metadata`, async () => {
    const key = await (await l.s.workspace()).key("development", "rw");
    await emitAll(make(`${l.base}/otlp/v1/logs`, key), (logger) => {
      logger.emit({
        eventName: "payment.captured",
        severityNumber: SeverityNumber.WARN2,
        severityText: "WARN",
        body: "card charged",
        timestamp: T0,
        attributes: { "http.status_code": 201, "http.method": "POST", user: "u1", ok: true },
        context: undefined,
      });
      logger.emit({ severityText: "ERROR", body: { code: 7, why: "declined" }, timestamp: T0 + 1, attributes: { "event.name": "payment.declined" } });
      logger.emit({ body: 42, timestamp: T0 + 2 });
    });
    const [a, b, c] = await storedEntries(l.s, key);
    expect(a).toMatchObject({
      action: "payment.captured",
      level: "warn",
      message: "card charged",
      client_timestamp: "2026-11-22T10:00:00.123Z",
      metadata: { http: { status_code: 201, method: "POST" }, user: "u1", ok: true },
    });
    expect(a.context).toMatchObject({ service: { name: "checkout" }, deployment: { environment: "test" }, scope: { name: "payments", version: "1.2.3" } });
    expect(b).toMatchObject({
      action: "payment.declined",
      level: "error",
      message: null,
      metadata: { body: { code: 7, why: "declined" }, event: { name: "payment.declined" } },
    });
    expect(c).toMatchObject({ action: "payments", level: "info", message: "42", client_timestamp: "2026-11-22T10:00:00.125Z" });
  });
}

test("OTEL_EXPORTER_OTLP_ENDPOINT=http://host:port/otlp and OTEL_EXPORTER_OTLP_HEADERS reach POST /otlp/v1/logs", async () => {
  const key = await (await l.s.workspace()).key("development", "rw");
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `${l.base}/otlp`;
  process.env.OTEL_EXPORTER_OTLP_HEADERS = `Authorization=Bearer ${key}`;
  try {
    await emitAll(new ProtoExporter(), (logger) => logger.emit({ severityNumber: SeverityNumber.DEBUG, body: "from env", timestamp: T0 }));
  } finally {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    delete process.env.OTEL_EXPORTER_OTLP_HEADERS;
  }
  expect((await storedEntries(l.s, key)).map((e) => [e.level, e.message])).toEqual([["debug", "from env"]]);
});

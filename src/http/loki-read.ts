// loki-read: the read half of the Loki HTTP API under /loki/api/v1 (contract §17), so that Grafana's Loki data source
// and Loki clients read Sluice. Answers and errors take Loki's JSON shapes.
import { Elysia } from "elysia";
import { ApiError, badRequest } from "../errors.ts";
import type { Expr, LogExpr, MetricExpr } from "../loki/ast.ts";
import { detectFields } from "../loki/detected.ts";
import { type Labels, labelsKey } from "../loki/labels.ts";
import { firstEntries, toStreams } from "../loki/logs.ts";
import { evaluate, type StepValue } from "../loki/metric.ts";
import { directionOf, limitOf, msWindow, type Params, rangeOf, stepOf, timeNs } from "../loki/params.ts";
import { parseLogQL } from "../loki/parse.ts";
import { selectEntries, selectLabelNames, selectStreams } from "../loki/select.ts";
import { TimeSlicer } from "../query/slice.ts";
import type { EntryStore } from "../storage/entries.ts";
import { readBody } from "./body.ts";
import type { Call, Gate, Server } from "./guard.ts";
import { scopeOf } from "./read.ts";
import { json, type Reply, requestUrl } from "./respond.ts";

const HOUR_NS = 3_600_000_000_000n;
const FORM = /^application\/x-www-form-urlencoded\b/i;
const FORM_LIMIT = 1024 * 1024;
const ALL: LogExpr = { kind: "log", selector: [], stages: [] };

interface Context {
  request: Request;
  params: Record<string, string>;
  set: Reply;
  server: Server | null;
}

type Handler = (call: Call<Record<string, string>>, p: Params) => Promise<unknown>;

/** lokiError renders a failure in Loki's error shape, keeping its status and headers (Retry-After). */
function lokiError(set: Reply, e: ApiError): string {
  const errorType = e.status === 400 ? "bad_data" : e.status === 404 ? "not_found" : e.status === 429 ? "too_many_requests" : "unauthorized";
  return json(set, { status: "error", errorType, error: e.message, message: e.message, error_code: e.code }, e.status, e.headers);
}

/** paramsOf merges the URL's parameters with a POST's form body (rule evaluators post with them in the URL). */
async function paramsOf(request: Request, timeoutMs?: number): Promise<Params> {
  const url = requestUrl(request).searchParams;
  if (request.method !== "POST" || !FORM.test(request.headers.get("content-type") ?? "")) return url;
  const form = new URLSearchParams(new TextDecoder().decode(await readBody(request, FORM_LIMIT, timeoutMs)));
  return { get: (name) => form.get(name) ?? url.get(name), getAll: (name) => [...url.getAll(name), ...form.getAll(name)] };
}

const required = (p: Params, name: string): string => {
  const v = p.get(name);
  if (v === null || v.trim() === "") throw badRequest("VALIDATION_FAILED", `${name} is required: send a LogQL query such as {level="error"}`);
  return v;
};

/** sampleValue writes a value as Prometheus does: NaN and ±Inf as words. */
const sampleValue = (v: number): string => (Number.isNaN(v) ? "NaN" : v === Infinity ? "+Inf" : v === -Infinity ? "-Inf" : String(v));
const seconds = (ns: bigint): number => Number(ns / 1_000_000n) / 1000;

const asLog = (expr: Expr, what: string): LogExpr => {
  if (expr.kind !== "log") throw badRequest("VALIDATION_QUERY_INVALID", `${what} takes a stream selector such as {level="error"}, not a metric query`);
  return expr;
};

/** matrix gathers per-step values into series, in order of first appearance. */
function matrix(values: StepValue[], steps: bigint[]) {
  const series = new Map<string, { metric: Labels; values: [number, string][] }>();
  values.forEach((v, k) => {
    const samples = "vector" in v ? v.vector : [{ labels: {}, value: v.scalar }];
    for (const s of samples) {
      const key = labelsKey(s.labels);
      let one = series.get(key);
      if (!one) series.set(key, (one = { metric: s.labels, values: [] }));
      one.values.push([seconds(steps[k]), sampleValue(s.value)]);
    }
  });
  return [...series.values()];
}

/** lokiReadRoutes mounts the Loki query API; detected_labels and /loki/api/v2alpha/tail stay unrouted (404) so Grafana falls back. */
export function lokiReadRoutes(gate: Gate, store: EntryStore, queryTimeoutMs: number) {
  const route = (handler: Handler) => {
    const guarded = gate.guarded<Record<string, string>>("logs:read", async (call) =>
      json(call.set, await handler(call, await paramsOf(call.request, gate.bodyTimeoutMs))),
    );
    return async (ctx: Context) => {
      try {
        return await guarded(ctx);
      } catch (e) {
        if (e instanceof ApiError) return lokiError(ctx.set, e);
        throw e;
      }
    };
  };
  const slice = () => new TimeSlicer(queryTimeoutMs);
  const success = (data: unknown) => ({ status: "success", data });

  const handlers: Record<string, Handler> = {
    async query({ caller, now }, p) {
      const expr = parseLogQL(required(p, "query"));
      if (expr.kind === "log") throw badRequest("VALIDATION_QUERY_INVALID", "a log query is answered by query_range; /query takes a metric query");
      const time = p.get("time");
      const t = time === null || time === "" ? BigInt(now) * 1_000_000n : timeNs("time", time);
      const [v] = await evaluate(expr, { store, scope: scopeOf(caller, now), slice: slice(), steps: [t] });
      if ("scalar" in v) return success({ resultType: "scalar", result: [seconds(t), sampleValue(v.scalar)] });
      return success({ resultType: "vector", result: v.vector.map((s) => ({ metric: s.labels, value: [seconds(t), sampleValue(s.value)] })) });
    },
    async query_range({ caller, now, request }, p) {
      const expr = parseLogQL(required(p, "query"));
      const { startNs, endNs } = rangeOf(p, now, HOUR_NS);
      const scope = scopeOf(caller, now);
      if (expr.kind === "log") {
        const limit = limitOf(p);
        const direction = directionOf(p);
        const categorized = (request.headers.get("x-loki-response-encoding-flags") ?? "").split(",").some((f) => f.trim() === "categorize-labels");
        const kept = await firstEntries(store, scope, expr, msWindow(startNs, endNs), limit, direction, slice());
        const data: Record<string, unknown> = { resultType: "streams", result: toStreams(kept, categorized) };
        if (categorized) data.encodingFlags = ["categorize-labels"];
        return success(data);
      }
      const step = stepOf(p, startNs, endNs);
      const steps: bigint[] = [];
      for (let t = startNs; t <= endNs; t += step) steps.push(t);
      return success({ resultType: "matrix", result: matrix(await evaluate(expr, { store, scope, slice: slice(), steps }), steps) });
    },
    async labels({ caller, now }, p) {
      const names = new Set<string>();
      const query = p.get("query");
      const log = query ? asLog(parseLogQL(query), "labels") : ALL;
      if (log.stages.length > 0) {
        await eachStream(caller, now, p, [query!], (stream) => {
          for (const name in stream) names.add(name);
        });
      } else {
        const { startNs, endNs } = rangeOf(p, now, 6n * HOUR_NS); // labels: the last 6 h by default, as eachStream
        await selectLabelNames(store, scopeOf(caller, now), log.selector, msWindow(startNs, endNs), slice(), names);
      }
      return success([...names].sort());
    },
    async series({ caller, now }, p) {
      const sets = new Map<string, Labels>();
      await eachStream(caller, now, p, p.getAll("match[]"), (stream) => {
        const key = labelsKey(stream);
        if (!sets.has(key)) sets.set(key, stream);
      });
      return success([...sets.values()]);
    },
    async "index/stats"({ caller, now }, p) {
      const log = p.get("query") ? asLog(parseLogQL(p.get("query")!), "index/stats") : ALL;
      const { startNs, endNs } = rangeOf(p, now, HOUR_NS);
      const streams = new Set<string>();
      let entries = 0;
      let bytes = 0;
      await selectEntries(store, scopeOf(caller, now), log, msWindow(startNs, endNs), slice(), ({ out }) => {
        streams.add(labelsKey(out.stream));
        entries++;
        bytes += Buffer.byteLength(out.line);
      });
      return { streams: streams.size, chunks: streams.size, entries, bytes };
    },
  };

  /** eachStream hands `add` the stream labels of each entry of the window that any selector selects (labels: last 6 h). */
  async function eachStream(caller: Call<unknown>["caller"], now: number, p: Params, selectors: string[], add: (stream: Labels) => void) {
    const { startNs, endNs } = rangeOf(p, now, 6n * HOUR_NS);
    const logs = selectors.length === 0 ? [ALL] : selectors.map((s) => asLog(parseLogQL(s), "a series match[]"));
    const window = msWindow(startNs, endNs);
    for (const log of logs) {
      // a bare selector needs the stream labels alone: no metadata, no line
      if (log.stages.length === 0) await selectStreams(store, scopeOf(caller, now), log.selector, window, slice(), add);
      else await selectEntries(store, scopeOf(caller, now), log, window, slice(), ({ out }) => add(out.stream));
    }
  }

  /** detected reads the newest `limit` entries the query keeps (default 1,000) and the fields found in them. */
  async function detected(caller: Call<unknown>["caller"], now: number, p: Params) {
    const query = p.get("query");
    const log = query ? asLog(parseLogQL(query), "detected_fields") : ALL;
    const { startNs, endNs } = rangeOf(p, now, HOUR_NS);
    const limit = p.get("limit") ? limitOf(p) : 1000;
    return { ...detectFields(await firstEntries(store, scopeOf(caller, now), log, msWindow(startNs, endNs), limit, "backward", slice())), limit };
  }
  handlers.detected_fields = async ({ caller, now }, p) => {
    const { fields, limit } = await detected(caller, now, p);
    return { fields, limit };
  };
  const fieldValues: Handler = async ({ caller, now, params }, p) => {
    const { values, limit } = await detected(caller, now, p);
    return { values: [...(values.get(params.name ?? "") ?? [])].sort(), limit };
  };
  /** volume is index/volume(_range): bytes per group of the selector's label names (or targetLabels), as a metric query. */
  const volume =
    (range: boolean): Handler =>
    async (call, p) => {
      const log = asLog(parseLogQL(required(p, "query")), "index/volume");
      const { startNs, endNs } = rangeOf(p, call.now, HOUR_NS);
      const target = p.get("targetLabels");
      const by = target
        ? target
            .split(",")
            .map((l) => l.trim())
            .filter(Boolean)
        : [...new Set(log.selector.map((m) => m.name))];
      const step = range ? stepOf(p, startNs, endNs) : endNs - startNs;
      const inner: MetricExpr = { kind: "range", op: "bytes_over_time", log, rangeNs: step > 0n ? step : 1n, offsetNs: 0n };
      const expr: MetricExpr = { kind: "aggregate", op: "sum", by, inner };
      const steps: bigint[] = [];
      for (let t = range ? startNs : endNs; t <= endNs; t += step > 0n ? step : 1n) steps.push(t);
      const values = await evaluate(expr, { store, scope: scopeOf(call.caller, call.now), slice: slice(), steps });
      if (range) return success({ resultType: "matrix", result: matrix(values, steps) });
      const [v] = values;
      const limit = p.get("limit") ? limitOf(p) : 100;
      const samples = "vector" in v ? [...v.vector].sort((a, b) => b.value - a.value).slice(0, limit) : [];
      return success({ resultType: "vector", result: samples.map((x) => ({ metric: x.labels, value: [seconds(endNs), sampleValue(x.value)] })) });
    };
  handlers["index/volume"] = volume(false);
  handlers["index/volume_range"] = volume(true);

  const labelValues: Handler = async ({ caller, now, params }, p) => {
    const name = params.name ?? "";
    const values = new Set<string>();
    await eachStream(caller, now, p, p.get("query") ? [p.get("query")!] : [], (stream) => {
      if (stream[name] !== undefined) values.add(stream[name]);
    });
    return success([...values].sort());
  };

  const app = new Elysia({ prefix: "/loki/api/v1" });
  const hidden = { parse: "none" as const, detail: { hide: true } };
  for (const [path, handler] of [
    ...Object.entries(handlers),
    ["label/:name/values", labelValues] as const,
    ["detected_field/:name/values", fieldValues] as const,
  ]) {
    app.get(`/${path}`, route(handler), hidden).post(`/${path}`, route(handler), hidden);
  }
  return app
    .get(
      "/label",
      route(async (call, p) => handlers.labels(call, p)),
      hidden,
    )
    .get("/status/buildinfo", () => ({ version: "3.0.0", revision: "sluice", branch: "main", buildUser: "sluice", buildDate: "", goVersion: "" }), {
      detail: { hide: true },
    });
}

// explore routes: POST /logs/hits, /logs/facets, /logs/fields and GET /logs/{id}/context (contract §10), with the
// authentication, environment binding, retention, query language and time budget of POST /logs/query.
import { Elysia } from "elysia";
import { notFound } from "../errors.ts";
import { isUuid } from "../ids.ts";
import { readContext } from "../query/context.ts";
import { fieldError, objectBody, readAxis, readInteger, readQuery, readWindow } from "../query/explore-request.ts";
import { countFacets, DEFAULT_FACETS } from "../query/facets.ts";
import { listFields } from "../query/fields.ts";
import { parseGroupField } from "../query/group-field.ts";
import { countHits, parseStep } from "../query/hits.ts";
import { parseQuery } from "../query/parser.ts";
import { TimeSlicer } from "../query/slice.ts";
import type { EntryStore } from "../storage/entries.ts";
import { readJson } from "./body.ts";
import { ContextQuery, ContextResponse, FacetsRequest, FacetsResponse, FieldsRequest, FieldsResponse, HitsRequest, HitsResponse } from "./explore-schema.ts";
import type { Call, Gate } from "./guard.ts";
import { operation } from "./openapi.ts";
import { scopeOf } from "./read.ts";
import { json, requestUrl } from "./respond.ts";
import { toLogEntry } from "./wire.ts";

const BODY_LIMIT = 64 * 1024;
const BUDGET_NOTE =
  "Counts are exact: each equals what paging through POST /logs/query with the same query, from and to returns. " +
  "A count running past the time budget (SLUICE_QUERY_TIMEOUT_SECONDS) answers 400 VALIDATION_QUERY_CONSTRAINT (details.reason time_budget).";

/** exploreRoutes mounts the counting and context endpoints under the workspace prefix. */
export function exploreRoutes(gate: Gate, store: EntryStore, queryTimeoutMs: number) {
  const body = async (request: Request, example: string) =>
    objectBody(await readJson(request, { bytes: BODY_LIMIT, depth: 8, timeoutMs: gate.bodyTimeoutMs }), example);
  return new Elysia()
    .post(
      "/logs/hits",
      gate.guarded("logs:read", async ({ request, caller, now, set }) => {
        const b = await body(request, '{"from": "2026-11-22T00:00:00Z", "to": "2026-11-23T00:00:00Z"}');
        const query = readQuery(b.query);
        const window = readWindow(b, readAxis(b.axis), true);
        const stepMs = parseStep(b.step, window.fromMs, window.toMs);
        const groupBy = b.groupBy === undefined ? undefined : parseGroupField(b.groupBy, "groupBy");
        const limit = readInteger("limit", b.limit, 1, 100, 10);
        const answer = await countHits(store, scopeOf(caller, now), { query, window, stepMs, groupBy, limit }, new TimeSlicer(queryTimeoutMs));
        return json(set, answer);
      }),
      {
        parse: "none",
        detail: operation({
          summary: "Count matching entries over time buckets",
          description: `Buckets start at multiples of step since the Unix epoch; the first holds from, the last to − 1 ms. groupBy splits the counts by a field's text form (null: missing, null, object or array; tag: once per tag). ${BUDGET_NOTE}`,
          permission: "logs:read",
          body: HitsRequest,
          responses: { 200: { description: "counts per bucket", schema: HitsResponse } },
          errors: [400, 401, 403, 429, 500],
        }),
      },
    )
    .post(
      "/logs/facets",
      gate.guarded("logs:read", async ({ request, caller, now, set }) => {
        const b = await body(request, '{"fields": ["level", "action"]}');
        const query = readQuery(b.query);
        const window = readWindow(b, readAxis(b.axis), false);
        const raw = b.fields ?? DEFAULT_FACETS;
        if (!Array.isArray(raw) || raw.length < 1 || raw.length > 20) throw fieldError("fields", "fields must be an array of 1 to 20 field names");
        const fields = raw.map((f) => parseGroupField(f, "fields"));
        const limit = readInteger("limit", b.limit, 1, 100, 10);
        return json(set, await countFacets(store, scopeOf(caller, now), { query, window, fields, limit }, new TimeSlicer(queryTimeoutMs)));
      }),
      {
        parse: "none",
        detail: operation({
          summary: "Top values of fields among matching entries",
          description: `Values by count descending, then text ascending; other counts unlisted values, missing entries without a value, distinct the exact number of values (too_many past 100,000). ${BUDGET_NOTE}`,
          permission: "logs:read",
          body: FacetsRequest,
          responses: { 200: { description: "one facet per field", schema: FacetsResponse } },
          errors: [400, 401, 403, 429, 500],
        }),
      },
    )
    .post(
      "/logs/fields",
      gate.guarded("logs:read", async ({ request, caller, now, set }) => {
        const b = await body(request, '{"prefix": "metadata."}');
        const query = readQuery(b.query);
        const window = readWindow(b, readAxis(b.axis), false);
        if (b.prefix !== undefined && typeof b.prefix !== "string") throw fieldError("prefix", "prefix must be a string such as metadata.http");
        const prefix = (b.prefix as string | undefined) ?? "";
        return json(set, await listFields(store, scopeOf(caller, now), { query, window, prefix }, new TimeSlicer(queryTimeoutMs)));
      }),
      {
        parse: "none",
        detail: operation({
          summary: "Object paths present in matching entries",
          description:
            "Every leaf path of actor, target, context and metadata (through objects, not arrays) in at most the 100,000 newest matching entries, with how many entries hold it and its JSON types; at most 1,000 paths, by count descending.",
          permission: "logs:read",
          body: FieldsRequest,
          responses: { 200: { description: "the paths", schema: FieldsResponse } },
          errors: [400, 401, 403, 429, 500],
        }),
      },
    )
    .get(
      "/logs/:id/context",
      gate.guarded("logs:read", async ({ request, caller, params, now, set }: Call<{ id: string | null }>) => {
        const q = requestUrl(request).searchParams;
        const count = (name: string) => {
          const v = q.get(name);
          if (v === null) return 20;
          if (!/^\d{1,3}$/.test(v) || Number(v) > 100) throw fieldError(name, `${name} must be a whole number from 0 to 100 (got ${JSON.stringify(v)})`);
          return Number(v);
        };
        const id = (params.id ?? "").toLowerCase();
        const query = parseQuery(q.get("query") ?? "");
        const before = count("before");
        const after = count("after");
        const env = caller.key.environment;
        const found = isUuid(id) ? await readContext(store, scopeOf(caller, now), { id, query, before, after }, new TimeSlicer(queryTimeoutMs)) : undefined;
        if (!found) throw notFound("LOG_NOT_FOUND", `no log entry ${JSON.stringify(params.id ?? "")} in this workspace and environment`);
        return json(set, {
          after: found.after.map((r) => toLogEntry(env, r.serverMs, r.entry)),
          entry: toLogEntry(env, found.entry.serverMs, found.entry.entry),
          before: found.before.map((r) => toLogEntry(env, r.serverMs, r.entry)),
        });
      }),
      {
        query: ContextQuery, // for the document: every value passes it, and the handler names a bad one
        detail: operation({
          summary: "The entries around one entry",
          description:
            "after ++ [entry] ++ before is a run of consecutive entries of the list (newest first) that match query, with the entry in it; the entry is returned even when it does not match.",
          permission: "logs:read",
          responses: { 200: { description: "the entry and its neighbours", schema: ContextResponse } },
          errors: [400, 401, 403, 404, 429, 500],
        }),
      },
    );
}

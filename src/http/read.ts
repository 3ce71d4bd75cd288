// read routes: GET /logs/{id}, GET /logs, POST /logs/query (contract §5).
import { Elysia } from "elysia";
import { Type as T } from "@sinclair/typebox";
import { requireEnvironment, type Caller } from "../auth/authenticate.ts";
import { badRequest, notFound } from "../errors.ts";
import { isUuid } from "../ids.ts";
import { filterTerms } from "../query/filters.ts";
import { explain, readOne, readPage, type PageRequest, type ReadScope } from "../query/page.ts";
import { retentionFloorMs } from "../limits/plans.ts";
import { parseQuery } from "../query/parser.ts";
import { parsePaging } from "../query/request.ts";
import { TimeSlicer } from "../query/slice.ts";
import { ENVIRONMENTS, FindLogsQuery, LEVELS, LogEntry, SearchLogsRequest, isEnvironment, type Level } from "../schema.ts";
import type { EntryStore } from "../storage/entries.ts";
import { readJson } from "./body.ts";
import type { Call, Gate } from "./guard.ts";
import { operation } from "./openapi.ts";
import { json, jsonText, requestUrl, type Reply } from "./respond.ts";
import { logEntryText, pageHeaders, toLogEntry } from "./wire.ts";

const QUERY_BODY_LIMIT = 64 * 1024; // a query is at most 2,000 characters; the rest of the body is small
const DEFAULT_QUERY_TIMEOUT_MS = 30_000; // SLUICE_QUERY_TIMEOUT_SECONDS' default (config.ts)
const BUDGET_NOTE =
  "A read that runs past the server's time budget (SLUICE_QUERY_TIMEOUT_SECONDS, default 30) answers 400 VALIDATION_QUERY_CONSTRAINT " +
  'with details {reason: "time_budget", budget_ms}: narrow from/to or add an indexed term (level=, tag=, action=, a word).';
const PAGE_HEADERS = {
  "X-Next-Cursor-ID": "id of this page's last entry; present only when more entries match",
  "X-Next-Cursor-TS": "server_timestamp of this page's last entry; present only when more entries match",
};

/** readRoutes mounts the three read endpoints under the workspace prefix; a page read stops with a 400 after `queryTimeoutMs`. */
export function readRoutes(gate: Gate, store: EntryStore, queryTimeoutMs = DEFAULT_QUERY_TIMEOUT_MS) {
  return new Elysia()
    .get(
      "/logs/:id",
      gate.guarded("logs:read", ({ caller, params, now, set }: Call<{ id: string | null }>) => {
        const id = (params.id ?? "").toLowerCase(); // null: malformed percent-encoding; UUIDs are case-insensitive on input (RFC 9562)
        const row = isUuid(id) ? readOne(store, scopeOf(caller, now), id) : undefined;
        if (!row) throw notFound("LOG_NOT_FOUND", `no log entry ${JSON.stringify(params.id ?? "")} in this workspace and environment`);
        return json(set, toLogEntry(caller.key.environment, row.serverMs, row.entry));
      }),
      {
        detail: operation({
          summary: "Get one log entry by id",
          permission: "logs:read",
          responses: { 200: { description: "the entry", schema: LogEntry } },
          errors: [401, 403, 404, 429, 500],
        }),
      },
    )
    .get(
      "/logs",
      gate.guarded("logs:read", ({ request, caller, now, set }) => {
        const q = requestUrl(request).searchParams;
        const envs = listParam(q, "environments");
        for (const e of envs) if (isEnvironment(e)) requireEnvironment(caller, e);
        const badEnv = envs.find((e) => !isEnvironment(e));
        if (badEnv !== undefined) {
          throw badRequest("VALIDATION_INVALID_ENVIRONMENT", `${JSON.stringify(badEnv)} is not an environment; use ${ENVIRONMENTS.join(", ")}`);
        }
        const paging = parsePaging(
          {
            from: q.get("from") ?? undefined,
            to: q.get("to") ?? undefined,
            cursorID: q.get("cursorID") ?? undefined,
            cursorTS: q.get("cursorTS") ?? undefined,
            pageSize: q.get("pageSize") ?? undefined,
          },
          true,
        );
        const levels = listParam(q, "levels");
        const badLevel = levels.find((l) => !(LEVELS as readonly string[]).includes(l));
        if (badLevel !== undefined) {
          throw badRequest("VALIDATION_FAILED", `${JSON.stringify(badLevel)} is not a level; use ${LEVELS.join(", ")}`, {
            errors: [{ field: "levels", message: `unknown level ${JSON.stringify(badLevel)}`, log_index: null }],
          });
        }
        const terms = filterTerms({
          levels: levels as Level[],
          tags: listParam(q, "tags"),
          action: q.get("action") ?? undefined,
          message: q.get("message") ?? undefined,
        });
        return respondPage(set, store, caller, { ...paging, query: { terms } }, now, queryTimeoutMs);
      }),
      {
        detail: operation({
          summary: "Find log entries by simple filters",
          description: `Newest first (server_timestamp, then id, descending). Filters are ANDed; lists are any-of. ${BUDGET_NOTE}`,
          permission: "logs:read",
          query: FindLogsQuery,
          responses: { 200: { description: "one page of entries", schema: T.Array(LogEntry), headers: PAGE_HEADERS } },
          errors: [400, 401, 403, 429, 500],
        }),
      },
    )
    .post(
      "/logs/query",
      gate.guarded("logs:read", async ({ request, caller, now, set }) => {
        const body = await readJson(request, { bytes: QUERY_BODY_LIMIT, depth: 8, timeoutMs: gate.bodyTimeoutMs });
        if (typeof body !== "object" || body === null || Array.isArray(body)) {
          throw badRequest("VALIDATION_INVALID_REQUEST", 'the body must be a JSON object such as {"query": "level=error"}');
        }
        const b = body as Record<string, unknown>;
        const opt = (k: string) => (b[k] === null ? undefined : b[k]);
        for (const [k, type] of [
          ["query", "string"],
          ["action", "string"],
          ["explain", "boolean"],
        ]) {
          if (opt(k) !== undefined && typeof opt(k) !== type) {
            throw badRequest("VALIDATION_FAILED", `${k} must be a ${type}`, { errors: [{ field: k, message: `${k} must be a ${type}`, log_index: null }] });
          }
        }
        const query = parseQuery((opt("query") as string | undefined) ?? ""); // its faults come before those of from/to
        const paging = parsePaging(
          { from: opt("from"), to: opt("to"), cursorID: opt("cursorID"), cursorTS: opt("cursorTS"), pageSize: opt("pageSize") },
          false,
        );
        const action = opt("action") as string | undefined;
        const req: PageRequest = { ...paging, query: { terms: [...query.terms, ...filterTerms({ action })] } };
        if (opt("explain") === true) return json(set, explain(store, scopeOf(caller, now), req));
        return respondPage(set, store, caller, req, now, queryTimeoutMs);
      }),
      {
        parse: "none",
        detail: operation({
          summary: "Search log entries with the query language",
          description: `query is ANDed with from, to and action. Newest first. With "explain": true the answer is the chosen plan and its estimates instead of entries. ${BUDGET_NOTE}`,
          permission: "logs:read",
          body: SearchLogsRequest,
          responses: { 200: { description: "one page of entries", schema: T.Array(LogEntry), headers: PAGE_HEADERS } },
          errors: [400, 401, 403, 429, 500],
        }),
      },
    );
}

async function respondPage(set: Reply, store: EntryStore, caller: Caller, req: PageRequest, now: number, budgetMs: number): Promise<string> {
  const env = caller.key.environment;
  const { rows, more } = await readPage(store, scopeOf(caller, now), req, new TimeSlicer(budgetMs));
  return jsonText(set, `[${rows.map((r) => logEntryText(env, r.serverMs, r.entry)).join(",")}]`, 200, pageHeaders(rows, more));
}

/** listParam reads a comma-separated parameter (repeats joined); empty members are dropped. */
function listParam(q: URLSearchParams, name: string): string[] {
  return q
    .getAll(name)
    .flatMap((v) => v.split(","))
    .map((v) => v.trim())
    .filter((v) => v !== "");
}

/** scopeOf is what a caller may read: its key's environment of its workspace, back to its plan's retention. */
export function scopeOf(caller: Caller, nowMs: number): ReadScope {
  return { ws: caller.workspace.id, env: caller.key.environment, floorMs: retentionFloorMs(caller.plan, nowMs) };
}

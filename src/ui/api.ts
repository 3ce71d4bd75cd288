// api: the explorer's calls to the HTTP API. The session cookie authenticates them; every POST carries X-Sluice-UI: 1,
// the header without which the server does not take the cookie for a POST (contract §12).

export const WS = "/api/v1/workspace";

/** LogEntry is the wire shape of a stored entry. */
export interface LogEntry {
  id: string;
  environment: string;
  level: Level;
  action: string;
  message: string | null;
  tags: string[];
  actor: Record<string, unknown> | null;
  target: Record<string, unknown> | null;
  context: Record<string, unknown> | null;
  metadata: Record<string, unknown> | null;
  client_timestamp: string;
  server_timestamp: string;
}

export const LEVELS = ["fatal", "error", "warn", "info", "debug", "trace"] as const;
export type Level = (typeof LEVELS)[number];

/** ApiFailure is an error answer: its code, message and details (details.position for query errors). */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

let onSignedOut: () => void = () => {};
/** whenSignedOut sets what happens when the server says the session has ended (401). */
export function whenSignedOut(f: () => void): void {
  onSignedOut = f;
}

async function failure(r: Response): Promise<ApiFailure> {
  let body: { error_code?: string; message?: string; details?: Record<string, unknown> } = {};
  try {
    body = await r.json();
  } catch {
    // not a JSON error body: the status says enough
  }
  return new ApiFailure(r.status, body.error_code ?? `HTTP_${r.status}`, body.message ?? r.statusText, body.details);
}

/** call sends one request and parses the JSON answer; a 401 also ends the session in the page. */
export async function call<T>(
  method: "GET" | "POST" | "PATCH" | "DELETE",
  path: string,
  body?: unknown,
  signal?: AbortSignal,
): Promise<{ data: T; headers: Headers }> {
  const headers: Record<string, string> = { "x-sluice-ui": "1" };
  if (body !== undefined) headers["content-type"] = "application/json";
  const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: "same-origin", signal });
  if (!r.ok) {
    const f = await failure(r);
    if (r.status === 401 && !path.startsWith("/ui/session")) onSignedOut();
    throw f;
  }
  const data = r.status === 204 ? (undefined as T) : ((await r.json()) as T);
  return { data, headers: r.headers };
}

/** Page is one page of a list and the cursor of the next, if any. */
export interface Page {
  entries: LogEntry[];
  next: { cursorID: string; cursorTS: string } | null;
}

/** TimeWindow is what from/to a read uses (RFC 3339, either may be absent). */
export interface TimeWindow {
  from?: string;
  to?: string;
}

/** queryPage reads one page of POST /logs/query. */
export async function queryPage(query: string, w: TimeWindow, cursor: Page["next"], pageSize: number, signal?: AbortSignal): Promise<Page> {
  const { data, headers } = await call<LogEntry[]>("POST", `${WS}/logs/query`, { query, ...w, pageSize, ...(cursor ?? {}) }, signal);
  const id = headers.get("x-next-cursor-id");
  const ts = headers.get("x-next-cursor-ts");
  return { entries: data, next: id && ts ? { cursorID: id, cursorTS: ts } : null };
}

export interface HitsAnswer {
  from: string;
  to: string;
  step_ms: number;
  buckets: string[];
  total: number;
  series: { group: Record<string, string | null> | null; counts: number[]; total: number }[];
  other: { counts: number[]; total: number } | null;
}

export interface FacetAnswer {
  total: number;
  facets: { field: string; values: { value: string; count: number }[]; other: number; missing: number; distinct: number | null; too_many?: boolean }[];
}

export interface FieldsAnswer {
  fields: { field: string; count: number; types: string[] }[];
  scanned: number;
  complete: boolean;
}

export interface ContextAnswer {
  after: LogEntry[];
  entry: LogEntry;
  before: LogEntry[];
}

export interface Rejection {
  at: string;
  protocol: string;
  reason: string;
  field: string;
  sample: string;
}

export interface Info {
  project: { id: string; name: string };
  organization?: { name?: string };
  api_key: { name?: string; environment_scopes?: string[] };
}

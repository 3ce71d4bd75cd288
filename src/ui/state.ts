// state: the explorer's whole view lives in the URL (contract §12), so a reload or a shared link shows the same view.

export type View = "logs" | "rejections" | "alerts";

/** ViewState is everything a link must carry. */
export interface ViewState {
  view: View;
  /** the query (contract §6) */
  q: string;
  /** a relative range ("1h", "all") or "custom" with from/to */
  range: string;
  from: string;
  to: string;
  /** the open entry's id, or "" */
  id: string;
  /** live tail on */
  live: boolean;
  /** facet fields shown beside level, action and tag */
  fields: string[];
}

export const RANGES: { value: string; label: string; ms: number }[] = [
  { value: "5m", label: "Last 5 minutes", ms: 5 * 60_000 },
  { value: "15m", label: "Last 15 minutes", ms: 15 * 60_000 },
  { value: "1h", label: "Last hour", ms: 3_600_000 },
  { value: "6h", label: "Last 6 hours", ms: 6 * 3_600_000 },
  { value: "24h", label: "Last 24 hours", ms: 24 * 3_600_000 },
  { value: "7d", label: "Last 7 days", ms: 7 * 86_400_000 },
  { value: "30d", label: "Last 30 days", ms: 30 * 86_400_000 },
  { value: "all", label: "All time", ms: Number.POSITIVE_INFINITY },
];
export const DEFAULT_RANGE = "24h";
/** the longest retention of any plan: "all time" starts no earlier */
const ALL_MS = 3650 * 86_400_000;

/** readState parses a URL's search part; anything unknown falls back to the default view. */
export function readState(search: string): ViewState {
  const p = new URLSearchParams(search);
  const range = p.get("range") ?? (p.get("from") || p.get("to") ? "custom" : DEFAULT_RANGE);
  return {
    view: p.get("view") === "rejections" ? "rejections" : p.get("view") === "alerts" ? "alerts" : "logs",
    q: p.get("q") ?? "",
    range: range === "custom" || RANGES.some((r) => r.value === range) ? range : DEFAULT_RANGE,
    from: p.get("from") ?? "",
    to: p.get("to") ?? "",
    id: p.get("id") ?? "",
    live: p.get("live") === "1",
    fields: p.getAll("f").filter((f) => f !== ""),
  };
}

/** writeState is the search part for a state, default values left out. */
export function writeState(s: ViewState): string {
  const p = new URLSearchParams();
  if (s.view !== "logs") p.set("view", s.view);
  if (s.q) p.set("q", s.q);
  if (s.range !== DEFAULT_RANGE) p.set("range", s.range);
  if (s.range === "custom") {
    if (s.from) p.set("from", s.from);
    if (s.to) p.set("to", s.to);
  }
  if (s.id) p.set("id", s.id);
  if (s.live) p.set("live", "1");
  for (const f of s.fields) p.append("f", f);
  const text = p.toString();
  return text ? `?${text}` : "";
}

/** Window is a run's fixed time window, in epoch ms; from is null for "all time" until the data's start is known. */
export interface Window {
  fromMs: number | null;
  toMs: number;
}

/** windowOf fixes a state's range at `now`: relative ranges end now, so every count of one run agrees with its list. */
export function windowOf(s: ViewState, now: number): Window {
  if (s.range === "custom") {
    const from = Date.parse(s.from);
    const to = Date.parse(s.to);
    return { fromMs: Number.isNaN(from) ? null : from, toMs: Number.isNaN(to) ? now + 1 : to };
  }
  const r = RANGES.find((x) => x.value === s.range) ?? RANGES[4];
  const toMs = now + 1; // `to` is exclusive: the entry stored this millisecond is in
  return { fromMs: Number.isFinite(r.ms) ? toMs - r.ms : null, toMs };
}

/** allFromMs is where "all time" starts for the histogram's first, coarse count. */
export const allFromMs = (toMs: number) => toMs - ALL_MS;

/** iso renders epoch ms as RFC 3339 UTC with milliseconds, as the API does. */
export const iso = (ms: number) => new Date(ms).toISOString();

/** shortTime renders a server timestamp for the list: date and time in UTC, to the millisecond. */
export const shortTime = (ts: string) => ts.replace("T", " ").replace("Z", "");

// EntryView: one entry: every field with filter for/out, the JSON of each part, copy and permalink, and the entries
// around it (GET /logs/{id}/context), loading more both ways from the ends already shown.
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiFailure, call, type ContextAnswer, type LogEntry, WS } from "./api.ts";
import { Marked } from "./LogList.tsx";
import { shortTime, writeState } from "./state.ts";

const STEP = 20;
const PARTS = ["actor", "target", "context", "metadata"] as const;

interface Props {
  id: string;
  /** the entry when the list has it already */
  known: LogEntry | null;
  q: string;
  highlights: string[];
  onClose(): void;
  onFilter(field: string, exclude: boolean, value: string | null): void;
  onOpen(id: string): void;
}

/** leaves lists the scalar fields of an entry by query path (objects are walked, arrays shown whole). */
function leaves(e: LogEntry): { path: string; text: string; filter: string | null; value: string | null }[] {
  const out: { path: string; text: string; filter: string | null; value: string | null }[] = [];
  out.push({ path: "level", text: e.level, filter: "level", value: e.level });
  out.push({ path: "action", text: e.action, filter: "action", value: e.action });
  out.push({ path: "message", text: e.message ?? "null", filter: "message", value: e.message });
  for (const t of e.tags) out.push({ path: "tag", text: t, filter: "tag", value: t });
  if (e.tags.length === 0) out.push({ path: "tags", text: "[]", filter: "tag", value: null });
  out.push({ path: "environment", text: e.environment, filter: "environment", value: e.environment });
  out.push({ path: "server_timestamp", text: e.server_timestamp, filter: null, value: null });
  out.push({ path: "client_timestamp", text: e.client_timestamp, filter: null, value: null });
  out.push({ path: "id", text: e.id, filter: "id", value: e.id });
  const walk = (prefix: string, v: unknown) => {
    if (v !== null && typeof v === "object" && !Array.isArray(v)) {
      for (const [k, x] of Object.entries(v)) walk(`${prefix}.${k}`, x);
    } else if (Array.isArray(v)) out.push({ path: prefix, text: JSON.stringify(v), filter: null, value: null });
    else out.push({ path: prefix, text: v === null ? "null" : String(v), filter: prefix, value: v === null ? null : String(v) });
  };
  for (const p of PARTS) if (e[p] !== null) walk(p, e[p]);
  return out;
}

async function copyText(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const area = document.createElement("textarea");
    area.value = text;
    document.body.append(area);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
}

/** permalink opens this entry among its neighbours: the query, ten minutes around it. */
function permalink(e: LogEntry, q: string): string {
  const t = Date.parse(e.server_timestamp);
  const search = writeState({
    view: "logs",
    q,
    range: "custom",
    from: new Date(t - 300_000).toISOString(),
    to: new Date(t + 300_000).toISOString(),
    id: e.id,
    live: false,
    fields: [],
  });
  return `${location.origin}/ui${search}`;
}

/** EntryView is a side panel (full screen on a narrow window). */
export function EntryView({ id, known, q, highlights, onClose, onFilter, onOpen }: Props) {
  const [entry, setEntry] = useState<LogEntry | null>(known);
  const [error, setError] = useState("");
  const [copied, setCopied] = useState("");
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    heading.current?.focus();
    if (known) return;
    call<LogEntry>("GET", `${WS}/logs/${encodeURIComponent(id)}`).then(
      (r) => setEntry(r.data),
      (e) => setError(e instanceof ApiFailure && e.status === 404 ? "No such entry in this workspace and environment." : (e as Error).message),
    );
  }, [id]);
  const copy = async (what: string, text: string) => {
    await copyText(text);
    setCopied(what);
  };

  return (
    <section class="entry" aria-labelledby="entry-title">
      <header>
        <h2 id="entry-title" tabIndex={-1} ref={heading}>
          Entry
        </h2>
        {entry && (
          <>
            <button type="button" onClick={() => copy("JSON", JSON.stringify(entry, null, 2))}>
              Copy JSON
            </button>
            <a href={permalink(entry, q)} class="button">
              Permalink
            </a>
            <button type="button" onClick={() => copy("link", permalink(entry, q))}>
              Copy link
            </button>
          </>
        )}
        <button type="button" onClick={onClose} aria-keyshortcuts="Escape">
          Close
        </button>
      </header>
      <p class="sr-status" role="status">
        {copied && `Copied the ${copied}.`}
      </p>
      {error && <p class="error">{error}</p>}
      {entry && (
        <div class="entry-body">
          <p class="entry-head">
            <span class={`lv lv-${entry.level}`}>{entry.level}</span> <time>{shortTime(entry.server_timestamp)}</time>{" "}
            <strong class="action">
              <Marked text={entry.action} hl={highlights} />
            </strong>
          </p>
          {entry.message !== null && (
            <pre class="message">
              <Marked text={entry.message} hl={highlights} />
            </pre>
          )}
          <table class="fields">
            <caption class="sr-only">Fields of the entry</caption>
            <colgroup>
              <col class="c-field" />
              <col />
              <col class="c-filter" />
            </colgroup>
            <thead>
              <tr>
                <th scope="col">Field</th>
                <th scope="col">Value</th>
                <th scope="col">
                  <span class="sr-only">Filter</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {leaves(entry).map((l, i) => (
                <tr key={i}>
                  <th scope="row">{l.path}</th>
                  <td class="val">{l.text}</td>
                  <td class="filters">
                    {l.filter && (
                      <>
                        <button
                          type="button"
                          class="small"
                          aria-label={`Filter for ${l.path} ${l.text}`}
                          title="Filter for"
                          onClick={() => onFilter(l.filter!, false, l.value)}
                        >
                          +
                        </button>
                        <button
                          type="button"
                          class="small"
                          aria-label={`Filter out ${l.path} ${l.text}`}
                          title="Filter out"
                          onClick={() => onFilter(l.filter!, true, l.value)}
                        >
                          −
                        </button>
                      </>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {PARTS.map((p) => (
            <details key={p} open={entry[p] !== null}>
              <summary>
                {p}
                {entry[p] === null ? " (null)" : ""}
              </summary>
              <pre class="json">{JSON.stringify(entry[p], null, 2)}</pre>
            </details>
          ))}
          <details>
            <summary>Whole entry as JSON</summary>
            <pre class="json">{JSON.stringify(entry, null, 2)}</pre>
          </details>
          <Context entry={entry} q={q} highlights={highlights} onOpen={onOpen} />
        </div>
      )}
    </section>
  );
}

/** Context lists the entries around one, newest first as the list, and loads more at either end. */
function Context({ entry, q, highlights, onOpen }: { entry: LogEntry; q: string; highlights: string[]; onOpen(id: string): void }) {
  const [matching, setMatching] = useState(false);
  const [newer, setNewer] = useState<LogEntry[]>([]);
  const [older, setOlder] = useState<LogEntry[]>([]);
  const [ends, setEnds] = useState({ newest: false, oldest: false });
  const [error, setError] = useState("");
  const ask = (anchor: string, before: number, after: number) => {
    const p = new URLSearchParams({ before: String(before), after: String(after) });
    if (matching && q) p.set("query", q);
    return call<ContextAnswer>("GET", `${WS}/logs/${anchor}/context?${p}`).then((r) => r.data);
  };
  useEffect(() => {
    setError("");
    ask(entry.id, STEP / 2, STEP / 2).then(
      (c) => {
        setNewer(c.after);
        setOlder(c.before);
        setEnds({ newest: c.after.length < STEP / 2, oldest: c.before.length < STEP / 2 });
      },
      (e) => setError((e as Error).message),
    );
  }, [entry.id, matching]);
  const loadNewer = () =>
    ask(newer[0]?.id ?? entry.id, 0, STEP).then((c) => {
      setNewer((n) => [...c.after, ...n]);
      setEnds((x) => ({ ...x, newest: c.after.length < STEP }));
    });
  const loadOlder = () =>
    ask(older[older.length - 1]?.id ?? entry.id, STEP, 0).then((c) => {
      setOlder((o) => [...o, ...c.before]);
      setEnds((x) => ({ ...x, oldest: c.before.length < STEP }));
    });
  const row = (e: LogEntry, self = false) => (
    <li key={e.id} class={self ? "self" : undefined}>
      <button type="button" class="ctx-row" onClick={() => !self && onOpen(e.id)} aria-current={self ? "true" : undefined}>
        <span class="ts">{shortTime(e.server_timestamp)}</span> <span class={`lv lv-${e.level}`}>{e.level}</span> <span class="action">{e.action}</span>{" "}
        <span class="msg">{e.message === null ? "" : <Marked text={e.message} hl={highlights} />}</span>
      </button>
    </li>
  );
  return (
    <section class="context" aria-labelledby="context-title">
      <h3 id="context-title">Surrounding entries</h3>
      <label class="check">
        <input type="checkbox" checked={matching} onChange={(e) => setMatching((e.currentTarget as HTMLInputElement).checked)} /> Only entries matching the
        query
      </label>
      {error && <p class="error">{error}</p>}
      <button type="button" onClick={loadNewer} disabled={ends.newest}>
        {ends.newest ? "No newer entries" : "Load newer"}
      </button>
      <ol aria-label="Entries around this one, newest first">
        {newer.map((e) => row(e))}
        {row(entry, true)}
        {older.map((e) => row(e))}
      </ol>
      <button type="button" onClick={loadOlder} disabled={ends.oldest}>
        {ends.oldest ? "No older entries" : "Load older"}
      </button>
    </section>
  );
}

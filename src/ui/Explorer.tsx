// Explorer: the signed-in page. Its state is the URL's (state.ts); a run of the query is results.ts, the live tail tail.ts.
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { call, type Info, type LogEntry, WS } from "./api.ts";
import { EntryView } from "./EntryView.tsx";
import { exportNdjson } from "./export.ts";
import { Facets } from "./Facets.tsx";
import { Help } from "./Help.tsx";
import { Histogram } from "./Histogram.tsx";
import { LogList } from "./LogList.tsx";
import { Modal } from "./Modal.tsx";
import { QueryBar } from "./QueryBar.tsx";
import { highlights, withTerm } from "./query-text.ts";
import { Rejections } from "./Rejections.tsx";
import { Alerts } from "./Alerts.tsx";
import { useResults } from "./results.ts";
import { iso, RANGES, readState, type ViewState, windowOf, writeState } from "./state.ts";
import { useTail } from "./tail.ts";
import { useKeyboard } from "./keyboard.ts";

const fmt = new Intl.NumberFormat("en");

/** Explorer lays out the query bar, histogram, facets, list and entry view, or the rejected entries. */
export function Explorer({ info, onSignOut }: { info: Info; onSignOut: () => void }) {
  const [state, setState] = useState<ViewState>(() => readState(location.search));
  const [draft, setDraft] = useState(state.q);
  const [nonce, setNonce] = useState(0);
  const [selected, setSelected] = useState(0);
  const [help, setHelp] = useState(false);
  const [explain, setExplain] = useState<string | null>(null);
  const [exporting, setExporting] = useState<{ count: number; abort: AbortController } | null>(null);
  const [notice, setNotice] = useState("");
  const queryInput = useRef<HTMLInputElement>(null);

  const update = (patch: Partial<ViewState>, push = true) => {
    setState((prev) => {
      const next = { ...prev, ...patch };
      const url = `/ui${writeState(next)}`;
      if (url !== location.pathname + location.search) history[push ? "pushState" : "replaceState"](null, "", url);
      return next;
    });
  };
  useEffect(() => {
    const onPop = () => {
      const s = readState(location.search);
      setState(s);
      setDraft(s.q);
    };
    addEventListener("popstate", onPop);
    return () => removeEventListener("popstate", onPop);
  }, []);

  const runKey = JSON.stringify([state.q, state.range, state.from, state.to, state.fields, nonce]);
  const w = useMemo(() => windowOf(state, Date.now()), [runKey]);
  const logs = state.view === "logs";
  const results = useResults(state.q, w, state.fields, runKey, logs && !state.live);
  const tail = useTail(logs && state.live, state.q);
  const rows: LogEntry[] = state.live ? tail.entries : results.entries;
  const hl = useMemo(() => highlights(state.q), [state.q]);
  const open = state.id ? (rows.find((e) => e.id === state.id) ?? null) : null;

  useEffect(() => {
    document.title = `${state.view === "rejections" ? "Rejected entries" : state.view === "alerts" ? "Alerts" : state.q || "All entries"} · Sluice`;
  }, [state.q, state.view]);

  const run = (q = draft) => {
    setDraft(q);
    setSelected(0);
    update({ q, id: "" });
    setNonce((n) => n + 1);
  };
  const filter = (field: string, exclude: boolean, value: string | null) => run(withTerm(state.q, field, exclude, value));
  const openEntry = (id: string) => update({ id }, false);
  const close = () => update({ id: "" }, false);

  useKeyboard({
    focusQuery: () => queryInput.current?.focus(),
    move: (d) => {
      const next = Math.max(0, Math.min(rows.length - 1, selected + d));
      setSelected(next);
      if (state.id && rows[next]) openEntry(rows[next].id); // with an entry open, j and k page through the entries
    },
    open: () => rows[selected] && openEntry(rows[selected].id),
    escape: () => (help ? setHelp(false) : explain !== null ? setExplain(null) : state.id ? close() : undefined),
    tail: () => logs && update({ live: !state.live }),
    help: () => setHelp((h) => !h),
  });

  const signOut = async () => {
    await call("DELETE", "/ui/session").catch(() => {});
    onSignOut();
  };
  const showExplain = async () => {
    try {
      const { data } = await call<unknown>("POST", `${WS}/logs/query`, { query: draft, ...results.window, explain: true });
      setExplain(JSON.stringify(data, null, 2));
    } catch (e) {
      setExplain(`${(e as Error).message}`);
    }
  };
  const startExport = () => {
    const abort = new AbortController();
    setNotice("");
    setExporting({ count: 0, abort });
    exportNdjson(state.q, results.window, (count) => setExporting({ count, abort }), abort.signal)
      .then(
        (count) => setNotice(`Exported ${fmt.format(count)} entries.`),
        (e) => setNotice((e as Error).name === "AbortError" ? "Export cancelled." : `Export failed: ${(e as Error).message}`),
      )
      .finally(() => setExporting(null));
  };

  const env = info.api_key.environment_scopes?.[0]?.replace(/^env:/, "") ?? "";
  return (
    <div class={`app${state.id ? " with-entry" : ""}`}>
      <header class="top">
        <a class="brand" href="/ui">
          Sluice
        </a>
        <nav aria-label="Views">
          <a
            href="/ui"
            aria-current={logs ? "page" : undefined}
            onClick={(e) => {
              e.preventDefault();
              update({ view: "logs" });
            }}
          >
            Logs
          </a>
          <a
            href="/ui?view=rejections"
            aria-current={state.view === "rejections" ? "page" : undefined}
            onClick={(e) => {
              e.preventDefault();
              update({ view: "rejections", id: "" });
            }}
          >
            Rejected entries
          </a>
          <a
            href="/ui?view=alerts"
            aria-current={state.view === "alerts" ? "page" : undefined}
            onClick={(e) => {
              e.preventDefault();
              update({ view: "alerts", id: "" });
            }}
          >
            Alerts
          </a>
        </nav>
        <span class="who" title="workspace and environment of the key">
          {info.project.name} · {env}
        </span>
        <button type="button" class="quiet" onClick={() => setHelp(true)} aria-keyshortcuts="?">
          Help
        </button>
        <button type="button" class="quiet" onClick={signOut}>
          Sign out
        </button>
      </header>
      {logs ? (
        <>
          <section class="toolbar" aria-label="Query">
            <QueryBar inputRef={queryInput} value={draft} onInput={setDraft} onRun={run} error={results.error} ran={state.q} window={results.window} />
            <label class="range">
              <span class="sr-only">Time range</span>
              <select
                value={state.range}
                onChange={(e) => {
                  const range = (e.currentTarget as HTMLSelectElement).value;
                  update(range === "custom" ? { range, from: iso(w.fromMs ?? Date.now() - 86_400_000), to: iso(w.toMs) } : { range, from: "", to: "" });
                }}
              >
                {RANGES.map((r) => (
                  <option key={r.value} value={r.value}>
                    {r.label}
                  </option>
                ))}
                <option value="custom">Custom range</option>
              </select>
            </label>
            <button type="button" class="primary" onClick={() => run()}>
              Run
            </button>
            <button type="button" aria-pressed={state.live} onClick={() => update({ live: !state.live })} aria-keyshortcuts="t">
              {state.live ? "Stop live tail" : "Live tail"}
            </button>
            <button type="button" onClick={showExplain}>
              Explain
            </button>
            <button type="button" onClick={() => update({ view: "alerts", id: "", live: false })}>
              Alert on this query
            </button>
            {exporting ? (
              <button type="button" onClick={() => exporting.abort.abort()}>
                Cancel export ({fmt.format(exporting.count)})
              </button>
            ) : (
              <button type="button" onClick={startExport} disabled={state.live}>
                Export NDJSON
              </button>
            )}
          </section>
          {state.range === "custom" && <CustomRange from={state.from} to={state.to} onApply={(from, to) => update({ range: "custom", from, to })} />}
          {!state.live && <Histogram hits={results.hits} onZoom={(from, to) => update({ range: "custom", from: iso(from), to: iso(to), id: "" })} />}
          <div class="body">
            {!state.live && (
              <Facets
                facets={results.facets}
                extra={state.fields}
                window={results.window}
                q={state.q}
                onFilter={filter}
                onFields={(fields) => update({ fields })}
              />
            )}
            <main class="list" aria-label="Entries">
              <p class="status" role="status">
                {state.live ? (
                  <>
                    <span class={`dot ${tail.status}`} aria-hidden="true" />
                    {tailLabel(tail.status)} · {fmt.format(rows.length)} entries{" "}
                    <button type="button" onClick={() => tail.setPaused(!tail.paused)}>
                      {tail.paused ? "Resume" : "Pause"}
                    </button>
                  </>
                ) : results.loading && rows.length === 0 ? (
                  "Searching…"
                ) : (
                  <>
                    {results.hits
                      ? `${fmt.format(results.hits.total)} entries`
                      : results.error
                        ? "No entries"
                        : `Counting… · ${fmt.format(rows.length)}${results.more ? "+" : ""} shown`}
                    {results.hits && rows.length < results.hits.total ? ` · ${fmt.format(rows.length)} loaded` : ""}
                    {notice ? ` · ${notice}` : ""}
                  </>
                )}
              </p>
              <LogList
                rows={rows}
                selected={selected}
                openId={state.id}
                highlights={hl}
                onSelect={setSelected}
                onOpen={openEntry}
                more={!state.live && results.more}
                loading={results.loading}
                loadMore={results.loadMore}
              />
            </main>
            {state.id && (
              <EntryView key={state.id} id={state.id} known={open} q={state.q} highlights={hl} onClose={close} onFilter={filter} onOpen={openEntry} />
            )}
          </div>
        </>
      ) : state.view === "alerts" ? (
        <Alerts query={state.q} />
      ) : (
        <Rejections />
      )}
      {help && <Help onClose={() => setHelp(false)} />}
      {explain !== null && (
        <Modal title="Query plan" onClose={() => setExplain(null)}>
          <pre class="json">{explain}</pre>
        </Modal>
      )}
    </div>
  );
}

const tailLabel = (s: string) => ({ connecting: "Connecting…", live: "Live", reconnecting: "Reconnecting…", paused: "Paused", stopped: "Stopped" })[s] ?? s;

/** CustomRange edits an absolute window as RFC 3339 text (the API's own form, to the millisecond). */
function CustomRange({ from, to, onApply }: { from: string; to: string; onApply: (from: string, to: string) => void }) {
  const [error, setError] = useState("");
  const submit = (ev: Event) => {
    ev.preventDefault();
    const f = (ev.currentTarget as HTMLFormElement).elements;
    const a = (f.namedItem("from") as HTMLInputElement).value.trim();
    const b = (f.namedItem("to") as HTMLInputElement).value.trim();
    const bad = [a, b].find((v) => !RFC3339.test(v) || Number.isNaN(Date.parse(v)));
    if (bad !== undefined) setError(`${JSON.stringify(bad)} is not an RFC 3339 date-time with a zone, such as 2026-11-22T10:00:00Z`);
    else if (Date.parse(a) >= Date.parse(b)) setError("From must be before To");
    else {
      setError("");
      onApply(a, b);
    }
  };
  return (
    <form class="custom-range" onSubmit={submit} aria-label="Custom time range">
      <label>
        From <input name="from" value={from} spellcheck={false} placeholder="2026-11-22T00:00:00Z" />
      </label>
      <label>
        To <input name="to" value={to} spellcheck={false} placeholder="2026-11-23T00:00:00Z" />
      </label>
      <button type="submit">Apply</button>
      {error && (
        <span class="error" role="alert">
          {error}
        </span>
      )}
    </form>
  );
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

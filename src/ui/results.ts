// results: one run of the current query: the list first (its first rows paint before anything else is asked), then
// the histogram and the facet counts, all over the same fixed window, so every count agrees with the list.
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { ApiFailure, call, type FacetAnswer, type HitsAnswer, type LogEntry, type Page, queryPage, type TimeWindow, WS } from "./api.ts";
import { allFromMs, iso, type Window } from "./state.ts";

const PAGE = 100;
/** the facets every view shows, before the ones the person adds */
export const BASE_FACETS = ["level", "action", "tag"];

/** Results is what a run has found so far. */
export interface Results {
  entries: LogEntry[];
  /** more entries match past the loaded ones */
  more: boolean;
  loading: boolean;
  error: ApiFailure | null;
  hits: HitsAnswer | null;
  facets: FacetAnswer | null;
  /** the run's window as sent to the API */
  window: TimeWindow;
  /** loadMore reads the next page */
  loadMore(): void;
}

const windowBody = (w: Window): TimeWindow => ({ ...(w.fromMs === null ? {} : { from: iso(w.fromMs) }), to: iso(w.toMs) });

/** hitsOver counts by level; "all time" first counts coarsely to find where the data starts, then again from there. */
async function hitsOver(q: string, w: Window, signal: AbortSignal): Promise<HitsAnswer> {
  const ask = (from: number) =>
    call<HitsAnswer>("POST", `${WS}/logs/hits`, { query: q, from: iso(from), to: iso(w.toMs), groupBy: "level" }, signal).then((r) => r.data);
  if (w.fromMs !== null) return ask(w.fromMs);
  const coarse = await ask(allFromMs(w.toMs));
  const first = coarse.buckets.findIndex((_, i) => coarse.series.some((s) => s.counts[i] > 0));
  if (first < 0) return coarse;
  return ask(Date.parse(coarse.buckets[first]));
}

/** useResults runs the query whenever `runKey` changes and pages on when asked. */
export function useResults(q: string, w: Window, fields: string[], runKey: string, enabled: boolean): Results {
  const [entries, setEntries] = useState<LogEntry[]>([]);
  const [more, setMore] = useState(false);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<ApiFailure | null>(null);
  const [hits, setHits] = useState<HitsAnswer | null>(null);
  const [facets, setFacets] = useState<FacetAnswer | null>(null);
  const cursor = useRef<Page["next"]>(null);
  const abort = useRef<AbortController | null>(null);
  const busy = useRef(false);
  const body = windowBody(w);

  const fail = (e: unknown) => {
    if ((e as Error).name === "AbortError") return;
    setError(e instanceof ApiFailure ? e : new ApiFailure(0, "NETWORK", `the server could not be reached: ${(e as Error).message}`));
  };

  useEffect(() => {
    if (!enabled) return;
    abort.current?.abort();
    const ac = new AbortController();
    abort.current = ac;
    busy.current = true;
    setLoading(true);
    setError(null);
    setHits(null);
    setFacets(null);
    performance.mark("sluice:run");
    queryPage(q, body, null, PAGE, ac.signal)
      .then((page) => {
        cursor.current = page.next;
        setEntries(page.entries);
        setMore(page.next !== null);
        busy.current = false;
        setLoading(false);
        // after the frame that shows the rows has been painted (a task queued from its animation frame runs after the paint)
        requestAnimationFrame(() => setTimeout(() => performance.mark("sluice:rows"), 0));
        // the counts only after the first rows: on a busy server they must not hold up what a person reads first
        hitsOver(q, w, ac.signal).then((h) => {
          performance.mark("sluice:hits");
          setHits(h);
        }, fail);
        call<FacetAnswer>("POST", `${WS}/logs/facets`, { query: q, ...body, fields: [...BASE_FACETS, ...fields], limit: 10 }, ac.signal).then((r) => {
          performance.mark("sluice:facets");
          setFacets(r.data);
        }, fail);
      })
      .catch((e) => {
        busy.current = false;
        setLoading(false);
        setEntries([]);
        setMore(false);
        fail(e);
      });
    return () => ac.abort();
  }, [runKey, enabled]);

  const loadMore = useCallback(() => {
    if (busy.current || cursor.current === null || !abort.current) return;
    busy.current = true;
    setLoading(true);
    const signal = abort.current.signal;
    queryPage(q, body, cursor.current, PAGE, signal)
      .then((page) => {
        if (signal.aborted) return;
        cursor.current = page.next;
        setEntries((prev) => prev.concat(page.entries));
        setMore(page.next !== null);
      }, fail)
      .finally(() => {
        busy.current = false;
        setLoading(false);
      });
  }, [runKey]);

  return { entries, more, loading, error, hits, facets, window: body, loadMore };
}

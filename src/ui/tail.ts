// tail: the live tail (contract §10) through EventSource. A dropped connection reconnects by itself and sends
// Last-Event-ID, so the server resumes after the last entry received; pause closes the stream and resume opens a new
// one after the same cursor: neither loses nor repeats an entry.
import { useEffect, useRef, useState } from "preact/hooks";
import { call, type LogEntry, WS } from "./api.ts";

/** at most this many tailed entries are kept in the page (the oldest go first) */
const KEEP = 100_000;
const BACKFILL = 100;

export type TailStatus = "connecting" | "live" | "reconnecting" | "paused" | "stopped";

/** Tail is the state of a live tail. */
export interface Tail {
  entries: LogEntry[];
  status: TailStatus;
  paused: boolean;
  setPaused(p: boolean): void;
}

/** useTail follows the query while `on`; its entries come newest first, as the list shows them. */
export function useTail(on: boolean, q: string): Tail {
  const [entries, setEntries] = useState<LogEntry[]>([]);
  const [status, setStatus] = useState<TailStatus>("stopped");
  const [paused, setPaused] = useState(false);
  const cursor = useRef<string | null>(null);
  const pending = useRef<LogEntry[]>([]);

  // a new query or switching the tail on starts afresh
  useEffect(() => {
    cursor.current = null;
    setEntries([]);
    setPaused(false);
  }, [on, q]);

  useEffect(() => {
    if (!on || paused) {
      setStatus(on ? "paused" : "stopped");
      return;
    }
    let source: EventSource | null = null;
    let flush = 0;
    let closed = false;
    const open = () => {
      const params = new URLSearchParams({ query: q });
      if (cursor.current !== null) params.set("after", cursor.current);
      else params.set("backfill", String(BACKFILL));
      source = new EventSource(`${WS}/logs/tail?${params}`);
      setStatus("connecting");
      source.onopen = () => setStatus("live");
      source.addEventListener("entry", (ev) => {
        const e = ev as MessageEvent<string>;
        cursor.current = e.lastEventId;
        pending.current.push(JSON.parse(e.data) as LogEntry);
        // entries arrive in bursts: paint once a frame
        flush ||= requestAnimationFrame(() => {
          flush = 0;
          const batch = pending.current.reverse();
          pending.current = [];
          setEntries((prev) => batch.concat(prev).slice(0, KEEP));
        });
      });
      // a marker (no event) moves the cursor too: EventSource keeps it as the last event id
      source.addEventListener("overflow", (ev) => {
        cursor.current = JSON.parse((ev as MessageEvent<string>).data).cursor;
        source?.close();
        if (!closed) open(); // too slow for a moment: resume from where the server stopped
      });
      source.onerror = () => {
        if (closed || !source) return;
        if (source.readyState === EventSource.CONNECTING) {
          setStatus("reconnecting");
          return;
        }
        // the server refused the stream: maybe the session ended (a 401 from /info signs the page out), else retry
        setStatus("reconnecting");
        source.close();
        call("GET", `${WS}/info`).then(
          () => setTimeout(() => !closed && open(), 2000),
          () => setStatus("stopped"),
        );
      };
    };
    open();
    return () => {
      closed = true;
      cancelAnimationFrame(flush);
      flush = 0;
      if (pending.current.length > 0) {
        const batch = pending.current.reverse();
        pending.current = [];
        setEntries((prev) => batch.concat(prev).slice(0, KEEP));
      }
      source?.close();
    };
  }, [on, paused, q]);

  return { entries, status, paused, setPaused };
}

// LogList: the entries, newest first, virtualized (only the rows in view are in the page, so 100,000 loaded rows
// scroll as smoothly as 100); scrolling near the end reads the next page through the cursor.
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import type { LogEntry } from "./api.ts";
import { marks } from "./query-text.ts";
import { shortTime } from "./state.ts";

const ROW = 28;
const OVERSCAN = 10;
/** start reading the next page this many rows before the end */
const AHEAD = 150;

interface Props {
  rows: LogEntry[];
  selected: number;
  openId: string;
  highlights: string[];
  onSelect(i: number): void;
  onOpen(id: string): void;
  more: boolean;
  loading: boolean;
  loadMore(): void;
}

/** Marked renders text with the query's words marked; always as text, never as markup. */
export function Marked({ text, hl }: { text: string; hl: string[] }) {
  return <>{marks(text, hl).map((r, i) => (r.mark ? <mark key={i}>{r.text}</mark> : r.text))}</>;
}

/** LogList shows the rows in a listbox; the selected one is the keyboard's (j/k, Enter). */
export function LogList({ rows, selected, openId, highlights, onSelect, onOpen, more, loading, loadMore }: Props) {
  const box = useRef<HTMLDivElement>(null);
  const [top, setTop] = useState(0);
  const [height, setHeight] = useState(600);

  useLayoutEffect(() => {
    const el = box.current!;
    const measure = () => setHeight(el.clientHeight);
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  const first = Math.max(0, Math.floor(top / ROW) - OVERSCAN);
  const last = Math.min(rows.length, Math.ceil((top + height) / ROW) + OVERSCAN);

  useEffect(() => {
    if (more && !loading && last >= rows.length - AHEAD) loadMore();
  }, [last, rows.length, more, loading]);

  // keep the keyboard's row in view
  useEffect(() => {
    const el = box.current;
    if (!el || rows.length === 0) return;
    const y = selected * ROW;
    if (y < el.scrollTop) el.scrollTop = y;
    else if (y + ROW > el.scrollTop + el.clientHeight) el.scrollTop = y + ROW - el.clientHeight;
  }, [selected]);

  const visible = [];
  for (let i = first; i < last; i++) {
    const e = rows[i];
    visible.push(
      // biome-ignore lint/a11y/useFocusableInteractive lint/a11y/useKeyWithClickEvents: the listbox holds the focus (aria-activedescendant); j, k and Enter are its keys (keyboard.ts)
      <div
        key={e.id}
        id={`row-${e.id}`}
        role="option"
        aria-selected={i === selected}
        class={`row${i === selected ? " selected" : ""}${e.id === openId ? " open" : ""}`}
        style={{ transform: `translateY(${i * ROW}px)` }}
        onClick={() => {
          onSelect(i);
          onOpen(e.id);
        }}
      >
        <span class="ts">{shortTime(e.server_timestamp)}</span>
        <span class={`lv lv-${e.level}`}>{e.level}</span>
        <span class="action">
          <Marked text={e.action} hl={highlights} />
        </span>
        <span class="msg">
          <Marked text={e.message ?? ""} hl={highlights} />
        </span>
      </div>,
    );
  }
  return (
    <>
      {rows.length === 0 && !loading && <p class="empty">No entries match.</p>}
      <div
        class="rows"
        ref={box}
        role="listbox"
        aria-label="Log entries"
        aria-activedescendant={rows[selected] ? `row-${rows[selected].id}` : undefined}
        tabIndex={0}
        onScroll={(e) => setTop((e.currentTarget as HTMLDivElement).scrollTop)}
      >
        <div class="spacer" style={{ height: `${rows.length * ROW + (more ? ROW : 0)}px` }}>
          {visible}
          {more && (
            <div class="row more" style={{ transform: `translateY(${rows.length * ROW}px)` }} aria-hidden="true">
              {loading ? "Loading more…" : ""}
            </div>
          )}
        </div>
      </div>
    </>
  );
}

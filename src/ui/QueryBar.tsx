// QueryBar: the query input with completion of facets, object paths (/logs/fields) and top values (/logs/facets),
// and the contract §6 error of the last run shown at its position.
import type { RefObject } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { type ApiFailure, call, type FacetAnswer, type FieldsAnswer, LEVELS, type TimeWindow, WS } from "./api.ts";
import { quote, splitTerm, termAt } from "./query-text.ts";

const FACETS = ["level", "action", "message", "tag", "environment", "id", "timestamp", "client_timestamp", "actor.", "target.", "context.", "metadata."];

interface Suggestion {
  label: string;
  /** the text that replaces the term being typed */
  insert: string;
  detail: string;
}

interface Props {
  inputRef: RefObject<HTMLInputElement | null>;
  value: string;
  onInput(q: string): void;
  onRun(q: string): void;
  error: ApiFailure | null;
  /** the last run's query, where the error's position points */
  ran: string;
  window: TimeWindow;
}

/** QueryBar is a combobox: typing suggests, arrows choose, Tab or Enter takes a suggestion, Enter alone runs. */
export function QueryBar({ inputRef, value, onInput, onRun, error, ran, window }: Props) {
  const [items, setItems] = useState<Suggestion[]>([]);
  const [active, setActive] = useState(-1);
  const paths = useRef<Promise<string[]> | null>(null);
  const values = useRef(new Map<string, Promise<{ value: string; count: number }[]>>());
  const seq = useRef(0);
  const windowKey = JSON.stringify(window);
  useEffect(() => {
    paths.current = null;
    values.current.clear();
  }, [windowKey]);

  const pathList = () =>
    (paths.current ??= call<FieldsAnswer>("POST", `${WS}/logs/fields`, { ...window }).then(
      (r) => r.data.fields.map((f) => f.field),
      () => [],
    ));
  const valueList = (field: string) => {
    let p = values.current.get(field);
    if (!p) {
      p =
        field === "level"
          ? Promise.resolve(LEVELS.map((l) => ({ value: l, count: -1 })))
          : call<FacetAnswer>("POST", `${WS}/logs/facets`, { ...window, fields: [field === "tags" ? "tag" : field], limit: 20 }).then(
              (r) => r.data.facets[0]?.values ?? [],
              () => [],
            );
      values.current.set(field, p);
    }
    return p;
  };

  const suggest = async (text: string, cursor: number) => {
    const n = ++seq.current;
    const t = termAt(text, cursor);
    const { facet, op, value: typed } = splitTerm(t.text);
    let next: Suggestion[] = [];
    if (op === "" && !t.text.startsWith('"')) {
      const prefix = t.text.toLowerCase();
      const names = [...FACETS, ...(t.text.length > 0 ? await pathList() : [])];
      next = names
        .filter((f) => f.toLowerCase().startsWith(prefix) && f !== t.text)
        .slice(0, 12)
        .map((f) => ({ label: f, insert: f.endsWith(".") ? f : `${f}=`, detail: FACETS.includes(f) ? "facet" : "field" }));
    } else if (facet !== "" && op !== "" && !/^(id|timestamp|server_timestamp|client_timestamp)$/.test(facet)) {
      const typedText = typed.replace(/^"/, "").toLowerCase();
      const list = await valueList(facet);
      next = list
        .filter((v) => v.value.toLowerCase().includes(typedText) && quote(v.value) !== typed)
        .slice(0, 12)
        .map((v) => ({ label: v.value, insert: `${facet}${op}${quote(v.value)} `, detail: v.count >= 0 ? String(v.count) : "" }));
    }
    if (n !== seq.current) return; // a later keystroke asked again
    setItems(next);
    setActive(-1);
  };

  const accept = (s: Suggestion) => {
    const input = inputRef.current!;
    const t = termAt(value, input.selectionStart ?? value.length);
    const q = value.slice(0, t.start) + s.insert + value.slice(t.end).replace(/^ /, s.insert.endsWith(" ") ? "" : " ");
    onInput(q);
    setItems([]);
    const at = t.start + s.insert.length;
    requestAnimationFrame(() => {
      input.setSelectionRange(at, at);
      suggest(q, at);
    });
  };

  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === "ArrowDown" && items.length > 0) {
      e.preventDefault();
      setActive((a) => (a + 1) % items.length);
    } else if (e.key === "ArrowUp" && items.length > 0) {
      e.preventDefault();
      setActive((a) => (a <= 0 ? items.length - 1 : a - 1));
    } else if ((e.key === "Enter" || e.key === "Tab") && active >= 0 && items[active]) {
      e.preventDefault();
      accept(items[active]);
    } else if (e.key === "Enter") {
      e.preventDefault();
      setItems([]);
      onRun(value);
    } else if (e.key === "Escape" && items.length > 0) {
      e.stopPropagation();
      setItems([]);
    }
  };

  const position = typeof error?.details?.position === "number" ? (error.details.position as number) : null;
  // put the caret where the error is, once per error
  useEffect(() => {
    if (position !== null && inputRef.current && inputRef.current.value === ran) inputRef.current.setSelectionRange(position, position);
  }, [error]);

  const open = items.length > 0;
  return (
    <div class="querybar">
      <label for="q" class="sr-only">
        Query
      </label>
      <input
        id="q"
        ref={inputRef}
        role="combobox"
        aria-autocomplete="list"
        aria-expanded={open}
        aria-controls="q-suggestions"
        aria-activedescendant={open && active >= 0 ? `q-s-${active}` : undefined}
        aria-invalid={error?.code.startsWith("VALIDATION_QUERY") ?? false}
        aria-describedby={error ? "q-error" : undefined}
        aria-keyshortcuts="/"
        autocomplete="off"
        spellcheck={false}
        placeholder='level=error action~"pay*" timeout   (/ to focus, ? for help)'
        value={value}
        onInput={(e) => {
          const el = e.currentTarget as HTMLInputElement;
          onInput(el.value);
          suggest(el.value, el.selectionStart ?? el.value.length);
        }}
        onFocus={(e) => suggest(value, (e.currentTarget as HTMLInputElement).selectionStart ?? value.length)}
        onBlur={() => setTimeout(() => setItems([]), 150)}
        onKeyDown={onKeyDown}
      />
      {open && (
        <div id="q-suggestions" role="listbox" aria-label="Suggestions" class="suggestions">
          {items.map((s, i) => (
            // biome-ignore lint/a11y/useFocusableInteractive: the input keeps the focus and points at the option (aria-activedescendant)
            <div
              key={s.label}
              id={`q-s-${i}`}
              role="option"
              aria-selected={i === active}
              onMouseDown={(e) => {
                e.preventDefault();
                accept(s);
              }}
            >
              <span>{s.label}</span>
              {s.detail && (
                <span class="detail" aria-hidden="true">
                  {s.detail}
                </span>
              )}
            </div>
          ))}
        </div>
      )}
      {error && (
        <div id="q-error" class="query-error" role="alert">
          <span class="code">{error.code}</span> {error.message}
          {position !== null && <span class="sr-only"> (at character {position + 1})</span>}
          {position !== null && (
            // biome-ignore lint/a11y/noNoninteractiveTabindex: a long query scrolls sideways here; the keyboard must reach it too
            <pre class="caret" tabIndex={0}>
              {ran}
              {"\n"}
              {" ".repeat(position)}^
            </pre>
          )}
        </div>
      )}
    </div>
  );
}

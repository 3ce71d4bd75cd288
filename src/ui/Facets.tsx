// Facets: the top values of fields with exact counts (/logs/facets); click includes a value, Alt-click excludes it.
import { useState } from "preact/hooks";
import { call, type FacetAnswer, type FieldsAnswer, type TimeWindow, WS } from "./api.ts";
import { BASE_FACETS } from "./results.ts";

const fmt = new Intl.NumberFormat("en");

interface Props {
  facets: FacetAnswer | null;
  /** fields shown beyond level, action and tag */
  extra: string[];
  window: TimeWindow;
  q: string;
  onFilter(field: string, exclude: boolean, value: string | null): void;
  onFields(fields: string[]): void;
}

/** Facets is the sidebar: each field's values, with other and missing, and a way to add a field by its path. */
export function Facets({ facets, extra, window, q, onFilter, onFields }: Props) {
  const [paths, setPaths] = useState<string[] | null>(null);
  const loadPaths = () => {
    if (paths) return;
    call<FieldsAnswer>("POST", `${WS}/logs/fields`, { query: q, ...window }).then(
      (r) => setPaths(r.data.fields.map((f) => f.field)),
      () => setPaths([]),
    );
  };
  const field = (f: string) => (f === "tag" ? "tag" : f);
  return (
    <aside class="facets" aria-label="Fields">
      <details open={matchMedia("(min-width: 800px)").matches}>
        <summary>Fields</summary>
        {!facets && <p class="muted">Counting…</p>}
        {facets?.facets.map((f) => (
          <section key={f.field} class="facet" aria-label={f.field}>
            <h2>
              {f.field}
              <span class="muted"> {f.distinct === null ? "many" : `${fmt.format(f.distinct)} distinct`}</span>
              {!BASE_FACETS.includes(f.field) && (
                <button type="button" class="quiet small" aria-label={`Remove field ${f.field}`} onClick={() => onFields(extra.filter((x) => x !== f.field))}>
                  ×
                </button>
              )}
            </h2>
            {f.too_many && <p class="muted">Over 100,000 values: narrow the query.</p>}
            <ul>
              {f.values.map((v) => (
                <li key={v.value}>
                  <button
                    type="button"
                    class="value"
                    title="Click to include, Alt-click to exclude"
                    onClick={(e) => onFilter(field(f.field), e.altKey, v.value)}
                  >
                    <span class="v">{v.value}</span> <span class="count">{fmt.format(v.count)}</span>
                  </button>
                  <button
                    type="button"
                    class="exclude"
                    aria-label={`Exclude ${f.field} ${v.value}`}
                    title="Exclude"
                    onClick={() => onFilter(field(f.field), true, v.value)}
                  >
                    −
                  </button>
                </li>
              ))}
              {f.missing > 0 && (
                <li>
                  <button type="button" class="value" title="Click to include, Alt-click to exclude" onClick={(e) => onFilter(field(f.field), e.altKey, null)}>
                    <span class="v muted">(none)</span> <span class="count">{fmt.format(f.missing)}</span>
                  </button>
                  <button
                    type="button"
                    class="exclude"
                    aria-label={`Exclude ${f.field} none`}
                    title="Exclude"
                    onClick={() => onFilter(field(f.field), true, null)}
                  >
                    −
                  </button>
                </li>
              )}
              {f.other > 0 && (
                <li class="other muted">
                  other <span class="count">{fmt.format(f.other)}</span>
                </li>
              )}
            </ul>
          </section>
        ))}
        <label class="add-field">
          Add a field
          <select
            onFocus={loadPaths}
            onMouseDown={loadPaths}
            onChange={(e) => {
              const v = (e.currentTarget as HTMLSelectElement).value;
              if (v && !extra.includes(v)) onFields([...extra, v]);
              (e.currentTarget as HTMLSelectElement).value = "";
            }}
          >
            <option value="">{paths === null ? "choose…" : paths.length === 0 ? "no object fields" : "choose…"}</option>
            {["environment", ...(paths ?? [])]
              .filter((p) => !extra.includes(p))
              .map((p) => (
                <option key={p} value={p}>
                  {p}
                </option>
              ))}
          </select>
        </label>
      </details>
    </aside>
  );
}

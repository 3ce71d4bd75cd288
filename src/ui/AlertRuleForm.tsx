// AlertRuleForm: a new alert rule from the explorer's query, previewed over the recent past before it is saved
// (contract §16: "Alert on this query").
import { useState } from "preact/hooks";
import { call, WS } from "./api.ts";

type Group = Record<string, string | null> | null;
/** Channel is what the form needs of a channel: its id and name. */
export interface Channel {
  id: string;
  name: string;
  type: string;
}
interface Preview {
  evaluations: { at: string; groups: { group: Group; value: number | null; state: string }[] }[];
  incidents: { group: Group; started_at: string; resolved_at: string | null; peak: number | null }[];
}

const A = `${WS}/alerts`;
const message = (e: unknown) => (e as Error).message;

const OPS = [">", ">=", "<", "<=", "==", "!="];

/** NewRule is the form: fields, Preview (its chart) and Save. */
export function NewRule({ query, channels, onSaved }: { query: string; channels: Channel[]; onSaved: () => void }) {
  const [rule, setRule] = useState({ name: query || "All entries", query, op: ">", threshold: "0", window: "5m", every: "1m", channel: "" });
  const [preview, setPreview] = useState<Preview | null>(null);
  const [note, setNote] = useState("");
  const body = () => ({
    name: rule.name,
    query: rule.query,
    condition: { op: rule.op, threshold: Number(rule.threshold) },
    window: rule.window,
    every: rule.every,
    channels: rule.channel ? [rule.channel] : [],
  });
  const field = (name: keyof typeof rule) => (e: Event) => setRule({ ...rule, [name]: (e.currentTarget as HTMLInputElement).value });
  const runPreview = () => {
    const to = Date.now();
    const everyMs = /^(\d+)(ms|s|m|h|d)$/.exec(rule.every);
    const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
    const span = everyMs ? Math.min(86_400_000, 500 * Number(everyMs[1]) * unit[everyMs[2] as keyof typeof unit]) : 86_400_000;
    call<Preview>("POST", `${A}/rules/preview`, { rule: body(), from: new Date(to - span).toISOString(), to: new Date(to).toISOString() }).then(
      (r) => {
        setPreview(r.data);
        setNote("");
      },
      (e) => setNote(message(e)),
    );
  };
  const save = () =>
    call<{ name: string }>("POST", `${A}/rules`, body()).then(
      (r) => {
        setNote(`Saved rule ${r.data.name}.`);
        onSaved();
      },
      (e) => setNote(message(e)),
    );
  return (
    <section aria-labelledby="new-rule-title" class="new-rule">
      <h2 id="new-rule-title">New rule</h2>
      <div class="fields">
        <label>
          Name <input value={rule.name} onInput={field("name")} />
        </label>
        <label>
          Query <input value={rule.query} onInput={field("query")} />
        </label>
        <label>
          Condition{" "}
          <select value={rule.op} onChange={field("op")}>
            {OPS.map((o) => (
              <option key={o} value={o}>
                {o}
              </option>
            ))}
          </select>
        </label>
        <label>
          Threshold <input type="number" value={rule.threshold} onInput={field("threshold")} />
        </label>
        <label>
          Window <input value={rule.window} onInput={field("window")} size={5} />
        </label>
        <label>
          Every <input value={rule.every} onInput={field("every")} size={5} />
        </label>
        <label>
          Channel{" "}
          <select value={rule.channel} onChange={field("channel")}>
            <option value="">none</option>
            {channels.map((c) => (
              <option key={c.id} value={c.id}>
                {c.name}
              </option>
            ))}
          </select>
        </label>
      </div>
      <button type="button" onClick={runPreview}>
        Preview
      </button>{" "}
      <button type="button" class="primary" onClick={save}>
        Save rule
      </button>
      <p role="status">{note}</p>
      {preview && <PreviewChart preview={preview} />}
    </section>
  );
}

/** PreviewChart draws one bar per evaluation (the largest group's value), firing ones marked, and counts the incidents. */
function PreviewChart({ preview }: { preview: Preview }) {
  const bars = preview.evaluations.map((e) => ({
    at: e.at,
    value: Math.max(0, ...e.groups.map((g) => g.value ?? 0)),
    firing: e.groups.some((g) => g.state === "firing"),
  }));
  const top = Math.max(1, ...bars.map((b) => b.value));
  const n = preview.incidents.length;
  return (
    <figure class="preview">
      <svg
        role="img"
        aria-label={`Preview: ${bars.length} evaluations, ${n} incident${n === 1 ? "" : "s"}`}
        viewBox={`0 0 ${Math.max(1, bars.length)} 100`}
        preserveAspectRatio="none"
      >
        {bars.map((b, i) => (
          <rect key={b.at} x={i} y={100 - (100 * b.value) / top} width={0.9} height={(100 * b.value) / top} class={b.firing ? "firing" : "quiet"}>
            <title>{`${b.at}: ${b.value}${b.firing ? " (firing)" : ""}`}</title>
          </rect>
        ))}
      </svg>
      <figcaption>
        {bars.length} evaluations from {bars[0]?.at ?? "–"}: {n} incident{n === 1 ? "" : "s"}
        {n > 0 && `, the first at ${preview.incidents[0].started_at} (peak ${preview.incidents[0].peak})`}.
      </figcaption>
    </figure>
  );
}

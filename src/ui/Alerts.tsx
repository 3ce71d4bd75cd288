// Alerts: the rules of the workspace environment with their state, the active alerts, the history, silences and
// channels with a test button, below the form of a new rule (AlertRuleForm.tsx) (contract §16).
import { useEffect, useState } from "preact/hooks";
import { type Channel, NewRule } from "./AlertRuleForm.tsx";
import { call, WS } from "./api.ts";

type Group = Record<string, string | null> | null;
interface Rule {
  id: string;
  name: string;
  query: string;
  condition: { op: string; threshold: number };
  window: string;
  every: string;
  enabled: boolean;
}
interface Instance {
  rule_id: string;
  group: Group;
  state: string;
  value: number | null;
  active_since: string;
  reason?: string;
}
interface Transition {
  at: string;
  rule_id: string;
  group: Group;
  from_state: string;
  to_state: string;
  value: number | null;
  deliveries: { channel_id: string; status: string }[];
}
interface Silence {
  id: string;
  rule_id: string | null;
  match: Record<string, string | null>;
  starts_at: string;
  ends_at: string;
  comment: string;
}
interface Data {
  rules: Rule[];
  alerts: Instance[];
  history: Transition[];
  silences: Silence[];
  channels: Channel[];
}

const A = `${WS}/alerts`;
const groupText = (g: Group) =>
  g
    ? Object.entries(g)
        .map(([k, v]) => `${k}=${v ?? "null"}`)
        .join(", ")
    : "";
const message = (e: unknown) => (e as Error).message;

/** Alerts is the Alerts page; `query` prefills a new rule ("Alert on this query"). */
export function Alerts({ query }: { query: string }) {
  const [data, setData] = useState<Data | null>(null);
  const [error, setError] = useState("");
  const load = () =>
    Promise.all([
      call<Rule[]>("GET", `${A}/rules`),
      call<Instance[]>("GET", A),
      call<Transition[]>("GET", `${A}/history`),
      call<Silence[]>("GET", `${A}/silences`),
      call<Channel[]>("GET", `${A}/channels`),
    ]).then(
      ([rules, alerts, history, silences, channels]) =>
        setData({ rules: rules.data, alerts: alerts.data, history: history.data.slice(-50).reverse(), silences: silences.data, channels: channels.data }),
      (e) => setError(message(e)),
    );
  useEffect(() => {
    load();
  }, []);
  const stateOf = (id: string) => {
    const mine = data?.alerts.filter((a) => a.rule_id === id) ?? [];
    if (mine.some((a) => a.state === "error")) return "error";
    const firing = mine.filter((a) => a.state === "firing").length;
    const pending = mine.filter((a) => a.state === "pending").length;
    return firing ? `firing (${firing})` : pending ? `pending (${pending})` : "inactive";
  };
  /** act runs one change and reloads the page's lists; a refusal (a key without scope *) is shown */
  const act = (change: Promise<unknown>) => change.then(load, (e) => setError(message(e)));
  const silenceHour = (a: Instance) =>
    act(
      call("POST", `${A}/silences`, {
        rule_id: a.rule_id,
        match: a.group ?? {},
        starts_at: new Date().toISOString(),
        ends_at: new Date(Date.now() + 3_600_000).toISOString(),
        comment: "silenced for an hour from the Alerts page",
      }),
    );
  const nameOf = (id: string | null) => (id === null ? "every rule" : (data?.rules.find((r) => r.id === id)?.name ?? id));
  return (
    <main class="alerts" aria-labelledby="alerts-title">
      <header>
        <h1 id="alerts-title">Alerts</h1>
        <button type="button" onClick={load}>
          Refresh
        </button>
      </header>
      {error && <p class="error">{error}</p>}
      <NewRule query={query} channels={data?.channels ?? []} onSaved={load} />
      {data && (
        <>
          <Table title="Rules" empty="No rule yet." heads={["Name", "Query", "Condition", "Every", "State", "Actions"]}>
            {data.rules.map((r) => (
              <tr key={r.id}>
                <td>{r.name}</td>
                <td>
                  <code>{r.query || "(everything)"}</code>
                </td>
                <td>
                  {r.condition.op} {r.condition.threshold} over {r.window}
                </td>
                <td>{r.every}</td>
                <td>{r.enabled ? stateOf(r.id) : "disabled"}</td>
                <td>
                  <button
                    type="button"
                    aria-label={`${r.enabled ? "Disable" : "Enable"} ${r.name}`}
                    onClick={() => act(call("PATCH", `${A}/rules/${r.id}`, { enabled: !r.enabled }))}
                  >
                    {r.enabled ? "Disable" : "Enable"}
                  </button>{" "}
                  <button type="button" aria-label={`Delete ${r.name}`} onClick={() => act(call("DELETE", `${A}/rules/${r.id}`))}>
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </Table>
          <Table title="Active alerts" empty="Nothing is pending or firing." heads={["Rule", "Group", "State", "Value", "Since", "Silence"]}>
            {data.alerts.map((a) => (
              <tr key={`${a.rule_id}${groupText(a.group)}`}>
                <td>{nameOf(a.rule_id)}</td>
                <td>{groupText(a.group)}</td>
                <td>{a.reason ? `${a.state}: ${a.reason}` : a.state}</td>
                <td>{a.value ?? ""}</td>
                <td class="ts">{a.active_since}</td>
                <td>
                  <button type="button" aria-label={`Silence 1h: ${nameOf(a.rule_id)} ${groupText(a.group)}`.trim()} onClick={() => silenceHour(a)}>
                    Silence 1h
                  </button>
                </td>
              </tr>
            ))}
          </Table>
          <Table title="History" empty="No transition yet." heads={["At", "Rule", "Group", "Change", "Value", "Notices"]}>
            {data.history.map((h, i) => (
              <tr key={i}>
                <td class="ts">{h.at}</td>
                <td>{nameOf(h.rule_id)}</td>
                <td>{groupText(h.group)}</td>
                <td>
                  {h.from_state} → {h.to_state}
                </td>
                <td>{h.value ?? ""}</td>
                <td>{h.deliveries.map((d) => d.status).join(", ")}</td>
              </tr>
            ))}
          </Table>
          <Table title="Silences" empty="No silence." heads={["Rule", "Match", "From", "Until", "Comment"]}>
            {data.silences.map((s) => (
              <tr key={s.id}>
                <td>{nameOf(s.rule_id)}</td>
                <td>{groupText(s.match)}</td>
                <td class="ts">{s.starts_at}</td>
                <td class="ts">{s.ends_at}</td>
                <td>{s.comment}</td>
              </tr>
            ))}
          </Table>
          <Table title="Channels" empty="No channel yet: create them through the API or sluice alerts create." heads={["Name", "Type", "Test"]}>
            {data.channels.map((c) => (
              <tr key={c.id}>
                <td>{c.name}</td>
                <td>{c.type}</td>
                <td>
                  <TestButton channel={c} />
                </td>
              </tr>
            ))}
          </Table>
        </>
      )}
    </main>
  );
}

function Table({ title, empty, heads, children }: { title: string; empty: string; heads: string[]; children: preact.ComponentChildren[] }) {
  const id = `alerts-${title.toLowerCase().replace(/\W+/g, "-")}`;
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children.length === 0 ? (
        <p class="muted">{empty}</p>
      ) : (
        <div class="table-scroll">
          <table class="rej">
            <thead>
              <tr>
                {heads.map((h) => (
                  <th key={h} scope="col">
                    {h}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>{children}</tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function TestButton({ channel }: { channel: Channel }) {
  const [result, setResult] = useState("");
  const test = () =>
    call<{ delivered: boolean; status: number | null; error?: string }>("POST", `${A}/channels/${channel.id}/test`).then(
      (r) => setResult(r.data.delivered ? "Delivered" : `Failed: ${r.data.error ?? ""}`),
      (e) => setResult(`Failed: ${message(e)}`),
    );
  return (
    <>
      <button type="button" onClick={test} aria-label={`Test ${channel.name}`}>
        Test
      </button>{" "}
      <span role="status">{result}</span>
    </>
  );
}

// Rejections: the last entries the shipper routes refused (contract §11, GET /ingest/rejections), with the reason.
import { useEffect, useState } from "preact/hooks";
import { call, type Rejection, WS } from "./api.ts";

/** Rejections lists them newest first; the sample is shown as text, exactly as received. */
export function Rejections() {
  const [list, setList] = useState<Rejection[] | null>(null);
  const [error, setError] = useState("");
  const load = () =>
    call<Rejection[]>("GET", `${WS}/ingest/rejections`).then(
      (r) => setList(r.data),
      (e) => setError((e as Error).message),
    );
  useEffect(() => {
    load();
  }, []);
  return (
    <main class="rejections" aria-labelledby="rejections-title">
      <header>
        <h1 id="rejections-title">Rejected entries</h1>
        <button type="button" onClick={load}>
          Refresh
        </button>
      </header>
      <p class="muted">The last 100 entries that OTLP, Loki, Elasticsearch bulk or syslog senders sent and that broke an entry rule, newest first.</p>
      {error && <p class="error">{error}</p>}
      {list && list.length === 0 && <p>No entry has been rejected.</p>}
      {list && list.length > 0 && (
        <div class="table-scroll">
          <table class="rej">
            <thead>
              <tr>
                <th scope="col">At</th>
                <th scope="col">Protocol</th>
                <th scope="col">Field</th>
                <th scope="col">Reason</th>
                <th scope="col">Sample</th>
              </tr>
            </thead>
            <tbody>
              {list.map((r, i) => (
                <tr key={i}>
                  <td class="ts">{r.at}</td>
                  <td>{r.protocol}</td>
                  <td>{r.field}</td>
                  <td>{r.reason}</td>
                  <td>
                    <pre class="sample">{r.sample}</pre>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </main>
  );
}

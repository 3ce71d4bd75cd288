// transfer: `sluice import FILE` (entries in bulk batches, with progress and a summary) and `sluice export` (NDJSON).
import { statSync } from "node:fs";
import type { ApiClient } from "./client.ts";
import { readRecords } from "./records.ts";

export interface ImportSummary {
  read: number;
  stored: number;
  rejected: number;
  /** why entries were refused, the first 100 of them */
  reasons: { at: number; field?: string; message: string }[];
}

const MAX_REASONS = 100;

/** importFile sends a file's entries in batches of the plan's max_batch_size; invalid entries are set aside, the rest stored. */
export async function importFile(client: ApiClient, path: string, progress?: (done: number, total: number, s: ImportSummary) => void): Promise<ImportSummary> {
  const info = await client.call("GET", "/info");
  if (info.status !== 200) throw new Error(`the server refused the key: ${info.json?.message ?? info.status}`);
  const planBatch: number = info.json.plan.max_batch_size;
  const batchSize = planBatch < 0 ? 1000 : planBatch; // a plan without a batch limit still gets bounded requests
  const summary: ImportSummary = { read: 0, stored: 0, rejected: 0, reasons: [] };
  const reject = (at: number, message: string, field?: string) => {
    summary.rejected++;
    if (summary.reasons.length < MAX_REASONS) summary.reasons.push({ at, ...(field === undefined ? {} : { field }), message });
  };
  const total = statSync(path).size;
  let done = 0;
  const file = Bun.file(path).stream();
  const counted = (async function* () {
    for await (const chunk of file) {
      done += chunk.byteLength;
      yield chunk;
    }
  })();
  let batch: { at: number; value: unknown }[] = [];
  const flush = async () => {
    while (batch.length > 0) {
      const r = await client.call(
        "POST",
        "/logs/bulk",
        batch.map((b) => b.value),
      );
      if (r.status === 201) {
        summary.stored += batch.length;
        break;
      }
      const errors: { log_index: number | null; field: string; message: string }[] = r.json?.details?.errors ?? [];
      const bad = new Set(errors.map((e) => e.log_index).filter((i): i is number => i !== null));
      if (r.status !== 400 || bad.size === 0) {
        for (const b of batch) reject(b.at, r.json?.message ?? `HTTP ${r.status}`);
        break;
      }
      for (const e of errors) if (e.log_index !== null) reject(batch[e.log_index].at, e.message, e.field);
      batch = batch.filter((_, i) => !bad.has(i)); // all or nothing: send again without the bad ones
    }
    batch = [];
    progress?.(done, total, summary);
  };
  for await (const rec of readRecords(counted)) {
    summary.read++;
    if ("error" in rec) reject(rec.at, rec.error);
    else batch.push(rec);
    if (batch.length >= batchSize) await flush();
  }
  await flush();
  return summary;
}

/** exportEntries writes every entry matching a query and time range as NDJSON, newest first. */
export async function exportEntries(
  client: ApiClient,
  filter: { query?: string; from?: string; to?: string },
  write: (lines: string) => Promise<unknown>,
): Promise<number> {
  let cursor: { cursorID: string; cursorTS: string } | undefined;
  let n = 0;
  for (;;) {
    const r = await client.call("POST", "/logs/query", { ...filter, pageSize: 100, ...cursor });
    if (r.status !== 200) throw new Error(`${r.json?.error_code ?? r.status}: ${r.json?.message ?? "export failed"}`);
    const page = r.json as unknown[];
    if (page.length > 0) await write(page.map((e) => `${JSON.stringify(e)}\n`).join("")); // written before the next page is asked for
    n += page.length;
    const id = r.headers.get("x-next-cursor-id");
    const ts = r.headers.get("x-next-cursor-ts");
    if (!id || !ts) return n;
    cursor = { cursorID: id, cursorTS: ts };
  }
}

/** progressBar draws one line on a terminal: how much of the file is read, and what became of it. */
export function progressBar(done: number, total: number, s: ImportSummary): string {
  const share = total === 0 ? 1 : Math.min(1, done / total);
  const width = 30;
  const filled = Math.round(share * width);
  return `\r[${"#".repeat(filled)}${" ".repeat(width - filled)}] ${(share * 100).toFixed(0).padStart(3)}%  read ${s.read}  stored ${s.stored}  rejected ${s.rejected}`;
}

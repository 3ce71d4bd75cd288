// export: the current query as NDJSON (contract §12), paged through POST /logs/query with its cursor and saved as a file.
import { queryPage, type TimeWindow } from "./api.ts";

/** exportNdjson pages through every matching entry of the window and hands the browser one NDJSON file; resolves the count. */
export async function exportNdjson(q: string, w: TimeWindow, progress: (count: number) => void, signal: AbortSignal): Promise<number> {
  const parts: string[] = [];
  let count = 0;
  let page = await queryPage(q, w, null, 100, signal);
  for (;;) {
    if (page.entries.length > 0) parts.push(`${page.entries.map((e) => JSON.stringify(e)).join("\n")}\n`);
    count += page.entries.length;
    progress(count);
    if (page.next === null) break;
    page = await queryPage(q, w, page.next, 100, signal);
  }
  const url = URL.createObjectURL(new Blob(parts, { type: "application/x-ndjson" }));
  const a = document.createElement("a");
  a.href = url;
  a.download = `sluice-${new Date().toISOString().replace(/[:.]/g, "-")}.ndjson`;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
  return count;
}

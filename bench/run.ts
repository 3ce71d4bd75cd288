// npm run bench: ingest, single, query, responsive and scale, each beside the baseline it measures in the same
// run, then two markdown tables: every figure beside its baseline (and its target, where the project keeps one),
// and the queries beside their full scans. Takes seven to eleven minutes here.
import { benchIngest } from "./ingest.ts";
import { benchQuery } from "./query.ts";
import { benchResponsive } from "./responsive.ts";
import { benchScale } from "./scale.ts";
import { median } from "./servers.ts";
import { benchSingle } from "./single.ts";

/** A Target is a bound the project holds a figure to on any machine, in the figure's unit. */
interface Target {
  max: number;
  unit: "ms" | "s" | "MiB" | "×";
}

/** TARGETS are the project's standing targets; throughput has none of its own: it is read as a share of its ceiling. */
export const TARGETS = {
  p99DuringScans: { max: 50, unit: "ms" }, // a slow query must not hold up health checks and writes
  singleP99: { max: 15, unit: "ms" }, // a write's answer comes soon even with 32 writers at full speed
  latestPage: { max: 2, unit: "ms" }, // the newest entries are what an operator opens first, however many are stored
  indexedTerm: { max: 5, unit: "ms" }, // a level or tag term answers from its index, common or rare
  fullText: { max: 20, unit: "ms" }, // words and phrases answer from the full-text index, not a scan
  pageRatio: { max: 1.5, unit: "×" }, // a cursor goes straight to its page: page 100 costs what page 1 does
  peakRss: { max: 2048, unit: "MiB" }, // 10M entries ingest on a small machine
  diskRatio: { max: 1.5, unit: "×" }, // every index and full text included, the store stays near the JSON it was sent
  restart: { max: 5, unit: "s" }, // a restarted server serves reads, full text included, at once
} as const satisfies Record<string, Target>;

export interface Results {
  ingest: Awaited<ReturnType<typeof benchIngest>>;
  single: Awaited<ReturnType<typeof benchSingle>>;
  query: Awaited<ReturnType<typeof benchQuery>>;
  responsive: Awaited<ReturnType<typeof benchResponsive>>;
  scale: Awaited<ReturnType<typeof benchScale>>;
}

const f = (n: number) => Math.round(n).toLocaleString("en-US");
const ms = (n: number) => `${n.toFixed(2)} ms`;
const pct = (n: number) => `${(n * 100).toFixed(1)}%`;
const times = (n: number) => `${n.toFixed(2)}×`;

/** tables renders the results as markdown: each figure, its baseline from the same run, their ratio, and its target if it has one. */
export function tables(r: Results): string {
  const rows: string[] = [];
  const row = (what: string, figure: string, baseline = "", ratio = "", check?: [Target, number]) => {
    let target = "";
    if (check) {
      const [{ max, unit }, value] = check;
      target = `≤ ${max.toLocaleString("en-US")}${unit === "×" ? "×" : ` ${unit}`}: ${value <= max ? "met" : "**not met**"}`;
    }
    rows.push(`| ${what} | ${figure} | ${baseline} | ${ratio} | ${target} |`);
  };
  const { ingest, single, query, responsive, scale } = r;

  row(
    `bulk ingest, ${f(scale.entries)} entries over HTTP`,
    `${f(scale.rate)} entries/s`,
    `${f(scale.ceiling)} entries/s (bare parse)`,
    pct(scale.rate / scale.ceiling),
  );
  row(`bulk ingest, ${f(ingest.entries)} entries over HTTP`, `${f(ingest.rate)} entries/s`, `${f(ingest.ceiling)} entries/s (bare parse)`, pct(ingest.ratio));
  row(
    `single-entry POST, wrk -t2 -c32, median of ${single.rounds.sluice.length} rounds`,
    `${f(single.sluice.rps)} req/s`,
    `${f(single.ceiling.rps)} req/s (bare echo)`,
    pct(single.sluice.rps / single.ceiling.rps),
  );
  row("single-entry POST p99", ms(single.sluice.p99), `${ms(single.ceiling.p99)} (bare echo)`, times(single.sluice.p99 / single.ceiling.p99), [
    TARGETS.singleP99,
    single.sluice.p99,
  ]);

  const { idle, busy, alone, during } = responsive;
  const scanned = `${f(responsive.entries)} entries`;
  row(`GET /healthz p99 while full scans of ${scanned} run`, ms(busy.health.p99), `${ms(idle.health.p99)} idle`, times(busy.health.p99 / idle.health.p99), [
    TARGETS.p99DuringScans,
    busy.health.p99,
  ]);
  row(`single POST /logs p99 while full scans of ${scanned} run`, ms(busy.write.p99), `${ms(idle.write.p99)} idle`, times(busy.write.p99 / idle.write.p99), [
    TARGETS.p99DuringScans,
    busy.write.p99,
  ]);
  row(`a full scan of ${scanned} while the probes run, median`, ms(median(during)), `${ms(median(alone))} alone`, times(median(during) / median(alone)));

  const q = scale.queries;
  const at = scale.entries % 1_000_000 === 0 ? `${scale.entries / 1_000_000}M:` : `${f(scale.entries)}:`;
  row(`${at} latest page p50`, ms(q["latest page"].p50), "", "", [TARGETS.latestPage, q["latest page"].p50]);
  row(`${at} level=error p50 (1 in 8)`, ms(q["level=error"].p50), "", "", [TARGETS.indexedTerm, q["level=error"].p50]);
  const tag = q["a Loghub system tag (tag=openssh, 0.6%)"];
  row(`${at} tag=openssh p50 (0.6%)`, ms(tag.p50), "", "", [TARGETS.indexedTerm, tag.p50]);
  const ft = q['full text message@"slow checkout"'];
  row(`${at} full text message@"slow checkout" p50`, ms(ft.p50), "", "", [TARGETS.fullText, ft.p50]);
  const phrase = q['rare phrase "authentication failure"'];
  row(`${at} rare phrase "authentication failure" p50`, ms(phrase.p50), "", "", [TARGETS.fullText, phrase.p50]);
  const pages = scale.page100.p50 / scale.page1.p50;
  row(`${at} page 100 through the cursor p50`, ms(scale.page100.p50), `page 1: ${ms(scale.page1.p50)}`, times(pages), [TARGETS.pageRatio, pages]);
  row(`${at} server RSS, peak while ingesting`, `${f(scale.peakRss / 2 ** 20)} MiB`, "", "", [TARGETS.peakRss, scale.peakRss / 2 ** 20]);
  row(`${at} on disk`, `${f(scale.du / 2 ** 20)} MiB`, `${f(scale.rawBytes / 2 ** 20)} MiB raw JSON`, times(scale.du / scale.rawBytes), [
    TARGETS.diskRatio,
    scale.du / scale.rawBytes,
  ]);
  row(`${at} restart until /readyz 200 and full text answers`, `${scale.restartSecs.toFixed(2)} s`, "", "", [TARGETS.restart, scale.restartSecs]);

  const cell = (v: string | number | undefined) => (v === undefined ? "" : String(v));
  const queries = query.rows.map(
    (q) =>
      `| ${q.query} | ${cell(q["http p50"])} | ${cell(q["http p95"])} | ${cell(q["engine p50"])} | ${cell(q["engine, full scan p50"])} | ${cell(q.plan)} |`,
  );
  return [
    "| what | figure | baseline (same run) | figure / baseline | target |",
    "|---|---|---|---|---|",
    ...rows,
    "",
    `Queries over ${f(query.entries)} entries (query.ts, ms; the full scan runs the same query through the same executor):`,
    "",
    "| query | http p50 | http p95 | engine p50 | engine, full scan p50 | plan |",
    "|---|---|---|---|---|---|",
    ...queries,
  ].join("\n");
}

if (import.meta.main) {
  console.log("== bench/ingest.ts");
  const ingest = await benchIngest();
  console.log(`sluice ${f(ingest.rate)} entries/s; bare parse ceiling ${f(ingest.ceiling)}; ${pct(ingest.ratio)}`);

  console.log("== bench/single.ts");
  const single = await benchSingle();
  console.log(
    `sluice ${f(single.sluice.rps)} req/s (p99 ${ms(single.sluice.p99)}); bare echo ${f(single.ceiling.rps)} req/s; ${pct(single.sluice.rps / single.ceiling.rps)} (rounds: sluice ${single.rounds.sluice.map(f).join(", ")}; echo ${single.rounds.echo.map(f).join(", ")})`,
  );

  console.log("== bench/query.ts");
  const query = await benchQuery();
  console.table(query.rows);

  console.log("== bench/responsive.ts");
  const responsive = await benchResponsive();
  const { idle, busy } = responsive;
  console.log(
    `p50 / p99 idle, then during full scans: GET /healthz ${ms(idle.health.p50)} / ${ms(idle.health.p99)}, ${ms(busy.health.p50)} / ${ms(busy.health.p99)}; POST /logs ${ms(idle.write.p50)} / ${ms(idle.write.p99)}, ${ms(busy.write.p50)} / ${ms(busy.write.p99)}`,
  );

  console.log("== bench/scale.ts");
  const scale = await benchScale();
  console.log(JSON.stringify(scale, null, 1));

  console.log(`\n${tables({ ingest, single, query, responsive, scale })}`);
}

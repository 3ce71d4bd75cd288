// npm run bench: every benchmark, each beside the baseline measured in the same run, then the issue's
// targets as one markdown table (figure, baseline, ratio, target, met). Takes about ten minutes here.
import { benchIngest } from "./ingest.ts";
import { benchQuery } from "./query.ts";
import { benchResponsive } from "./responsive.ts";
import { benchScale } from "./scale.ts";
import { benchSingle } from "./single.ts";

const f = (n: number) => Math.round(n).toLocaleString("en-US");
const ms = (n: number) => `${n.toFixed(2)} ms`;
const pct = (n: number) => `${(n * 100).toFixed(1)}%`;
const rows: string[][] = [];
const row = (what: string, figure: string, baseline: string, ratio: string, target: string, met: boolean) =>
  rows.push([what, figure, baseline, ratio, target, met ? "met" : "**not met**"]);

console.log("== bench/ingest.ts (1M entries)");
const ingest = await benchIngest();
console.log(`sluice ${f(ingest.rate)} entries/s; bare parse ceiling ${f(ingest.ceiling)}; ${pct(ingest.ratio)}`);

console.log("== bench/single.ts");
const single = await benchSingle();
const singleRatio = single.sluice.rps / single.ceiling.rps;
console.log(`sluice ${f(single.sluice.rps)} req/s (p99 ${ms(single.sluice.p99)}); bare echo ${f(single.ceiling.rps)} req/s; ${pct(singleRatio)} (medians of rounds: sluice ${single.rounds.sluice.map(f).join(", ")}; echo ${single.rounds.echo.map(f).join(", ")})`);

console.log("== bench/query.ts (1M entries)");
const query = await benchQuery();
console.table(query.rows);

console.log("== bench/responsive.ts (1M entries)");
const responsive = await benchResponsive();
console.log(JSON.stringify(responsive));

console.log("== bench/scale.ts (10M entries)");
const scale = await benchScale();
console.log(JSON.stringify(scale, null, 1));

const scaleRatio = scale.rate / scale.ceiling;
row(`bulk ingest, ${f(scale.entries)} entries over HTTP`, `${f(scale.rate)} entries/s`, `${f(scale.ceiling)} entries/s (bare parse)`, pct(scaleRatio), "≥ 60%", scaleRatio >= 0.6);
row(`bulk ingest, ${f(ingest.entries)} entries`, `${f(ingest.rate)} entries/s`, `${f(ingest.ceiling)} entries/s (bare parse)`, pct(ingest.ratio), "≥ 60%", ingest.ratio >= 0.6);
row("single-entry POST, wrk -t2 -c32", `${f(single.sluice.rps)} req/s`, `${f(single.ceiling.rps)} req/s (bare echo)`, pct(singleRatio), "≥ 60%", singleRatio >= 0.6);
// the issue also quotes what 60% meant on the machine it was written on: report against those figures too
// (three decimals: 0.996 is not met, and two would print it as 1.00)
row(`bulk ingest, ${f(scale.entries)} entries, against the issue's figure`, `${f(scale.rate)} entries/s`, "115,000 entries/s (60% of the issue's 190,000)", `${(scale.rate / 115_000).toFixed(3)}×`, "≥ 1×", scale.rate >= 115_000);
row("single-entry POST, against the issue's figure", `${f(single.sluice.rps)} req/s`, "7,620 req/s (60% of the issue's 12,700)", `${(single.sluice.rps / 7_620).toFixed(3)}×`, "≥ 1×", single.sluice.rps >= 7_620);
row("single-entry POST p99", ms(single.sluice.p99), ms(single.ceiling.p99), "", "≤ 15 ms", single.sluice.p99 <= 15);
const { idle, busy } = responsive;
row("GET /healthz p99 while full scans of 1M entries run", ms(busy.health.p99), `${ms(idle.health.p99)} idle`, "", "≤ 50 ms", busy.health.p99 <= 50);
row("single POST /logs p99 while full scans of 1M entries run", ms(busy.write.p99), `${ms(idle.write.p99)} idle`, "", "≤ 50 ms", busy.write.p99 <= 50);
const q = scale.queries;
row("10M: latest page p50", ms(q["latest page"].p50), "", "", "≤ 2 ms", q["latest page"].p50 <= 2);
row("10M: level=error p50 (1 in 8)", ms(q["level=error"].p50), "", "", "≤ 5 ms", q["level=error"].p50 <= 5);
const tag = q["a Loghub system tag (tag=openssh, 0.6%)"];
row("10M: tag=openssh p50 (0.6%)", ms(tag.p50), "", "", "≤ 5 ms", tag.p50 <= 5);
const ft = q['full text message@"slow checkout"'];
row('10M: full text message@"slow checkout" p50', ms(ft.p50), "", "", "≤ 20 ms", ft.p50 <= 20);
const phrase = q['rare phrase "authentication failure"'];
row('10M: rare phrase "authentication failure" p50', ms(phrase.p50), "", "", "≤ 20 ms", phrase.p50 <= 20);
const pages = scale.page100.p50 / scale.page1.p50;
row("10M: page 100 through the cursor p50", ms(scale.page100.p50), `page 1: ${ms(scale.page1.p50)}`, `${pages.toFixed(2)}×`, "what page 1 costs (≤ 1.5×)", pages <= 1.5);
row("10M: server RSS, peak while ingesting", `${f(scale.peakRss / 2 ** 20)} MiB`, "", "", "≤ 2,048 MiB", scale.peakRss <= 2 ** 31);
row("10M: on disk", `${f(scale.du / 2 ** 20)} MiB`, `${f(scale.rawBytes / 2 ** 20)} MiB raw JSON`, `${(scale.du / scale.rawBytes).toFixed(2)}×`, "≤ 1.5×", scale.du <= 1.5 * scale.rawBytes);
row("10M: restart until /readyz 200 and full text answers", `${scale.restartSecs.toFixed(2)} s`, "", "", "≤ 5 s", scale.restartSecs <= 5);

console.log("\n| what | figure | baseline (same run) | ratio | target | |\n|---|---|---|---|---|---|");
for (const r of rows) console.log(`| ${r.join(" | ")} |`);

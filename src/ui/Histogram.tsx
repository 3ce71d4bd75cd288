// Histogram: hits over time stacked by level (uPlot); dragging across it zooms the time range to the selection.
import { useEffect, useRef, useState } from "preact/hooks";
import uPlot from "uplot";
import { type HitsAnswer, LEVELS } from "./api.ts";

/** bottom to top of a stack */
const STACK = [...LEVELS].reverse();
const fmt = new Intl.NumberFormat("en");
const HEIGHT = 130;

/** utcLabel is an axis label in UTC, as the list shows times: the date only when the range spans days. */
function utcLabel(seconds: number, u: uPlot): string {
  const span = (u.scales.x.max ?? 0) - (u.scales.x.min ?? 0);
  const t = new Date(seconds * 1000).toISOString();
  if (span >= 2 * 86_400) return `${t.slice(5, 10)} ${t.slice(11, 16)}`;
  return span >= 120 ? t.slice(11, 16) : t.slice(11, 19);
}

const cssVar = (name: string) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

/** stacked turns per-level counts into running sums, drawn tallest first so each level shows its own band. */
function stacked(hits: HitsAnswer): { data: uPlot.AlignedData; order: string[] } {
  const counts = new Map<string, number[]>();
  for (const s of hits.series) counts.set(String(s.group?.level ?? "null"), s.counts);
  const zero = hits.buckets.map(() => 0);
  const running: number[][] = [];
  let sum = zero;
  for (const level of STACK) {
    const c = counts.get(level) ?? zero;
    sum = sum.map((v, i) => v + c[i]);
    running.push(sum);
  }
  const xs = hits.buckets.map((b) => Date.parse(b) / 1000);
  return { data: [xs, ...running.reverse()], order: [...STACK].reverse() };
}

/** Histogram draws the counts of the last run; onZoom gets the dragged range in epoch ms. */
export function Histogram({ hits, onZoom }: { hits: HitsAnswer | null; onZoom: (fromMs: number, toMs: number) => void }) {
  const box = useRef<HTMLDivElement>(null);
  const zoom = useRef(onZoom);
  zoom.current = onZoom;
  const scheme = useScheme();

  useEffect(() => {
    const el = box.current;
    if (!el || !hits) return;
    const { data, order } = stacked(hits);
    const stepS = hits.step_ms / 1000;
    const bars = uPlot.paths.bars!({ size: [0.9, 64], align: 1 });
    const text = cssVar("--muted");
    const grid = cssVar("--grid");
    const plot = new uPlot(
      {
        width: el.clientWidth,
        height: HEIGHT,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
        legend: { show: false },
        cursor: { drag: { x: true, y: false, setScale: false }, points: { show: false } },
        select: { show: true, left: 0, top: 0, width: 0, height: 0 },
        scales: { x: { time: true, range: () => [data[0][0] as number, (data[0][data[0].length - 1] as number) + stepS] } },
        axes: [
          { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 }, values: (u, splits) => splits.map((x) => utcLabel(x, u)) },
          {
            stroke: text,
            grid: { stroke: grid, width: 1 },
            ticks: { show: false },
            size: 44,
            values: (_, v) => v.map((n) => (n >= 1000 ? `${n / 1000}k` : String(n))),
          },
        ],
        series: [
          {},
          ...order.map((level) => ({
            label: level,
            fill: cssVar(`--level-${level}`),
            stroke: cssVar(`--level-${level}`),
            width: 0,
            paths: bars,
            points: { show: false },
          })),
        ],
        hooks: {
          setSelect: [
            (u) => {
              if (u.select.width < 3) return;
              const from = u.posToVal(u.select.left, "x") * 1000;
              const to = u.posToVal(u.select.left + u.select.width, "x") * 1000;
              u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
              zoom.current(Math.floor(from), Math.ceil(to));
            },
          ],
        },
      },
      data,
      el,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: el.clientWidth, height: HEIGHT }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [hits, scheme]);

  const totals = new Map(hits?.series.map((s) => [String(s.group?.level ?? "null"), s.total]) ?? []);
  const summary = hits
    ? `${fmt.format(hits.total)} entries in ${hits.buckets.length} buckets of ${hits.step_ms / 1000} s from ${hits.from} to ${hits.to} (UTC).`
    : "Counting…";
  return (
    <section class="histogram" aria-label="Histogram">
      <div class="chart" ref={box} role="img" aria-label="Entries over time by level; drag across to zoom" aria-describedby="histogram-summary" />
      <p id="histogram-summary" class="sr-only">
        {summary}
      </p>
      <ul class="legend" aria-label="Entries by level">
        <li class="utc">times in UTC</li>
        {LEVELS.map((l) => (
          <li key={l}>
            <span class={`swatch lv-${l}`} aria-hidden="true" />
            {l} {hits ? fmt.format(totals.get(l) ?? 0) : "…"}
          </li>
        ))}
      </ul>
    </section>
  );
}

/** useScheme changes when the system switches between light and dark, so the chart redraws in the new colours. */
function useScheme(): number {
  const [n, setN] = useState(0);
  useEffect(() => {
    const m = matchMedia("(prefers-color-scheme: dark)");
    const on = () => setN((x) => x + 1);
    m.addEventListener("change", on);
    return () => m.removeEventListener("change", on);
  }, []);
  return n;
}

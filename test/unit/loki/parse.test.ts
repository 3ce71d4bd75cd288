// LogQL parsing (contract §17): Grafana's grammar read into the typed tree; precedence; strings; what is a 400.
import { expect, test } from "bun:test";
import { ApiError } from "../../../src/errors.ts";
import type { MetricExpr } from "../../../src/loki/ast.ts";
import { parseLogQL } from "../../../src/loki/parse.ts";

/** shape prints a metric tree with its parentheses, so that precedence shows. */
function shape(e: MetricExpr): string {
  switch (e.kind) {
    case "number":
      return String(e.value);
    case "vector":
      return `vector(${e.value})`;
    case "binary":
      return `(${shape(e.left)} ${e.op}${e.bool ? " bool" : ""} ${shape(e.right)})`;
    case "aggregate":
      return `${e.op}(${shape(e.inner)})`;
    case "range":
      return `${e.op}[${e.rangeNs}]`;
  }
}
const metric = (q: string) => shape(parseLogQL(q) as MetricExpr);

test("binary operators follow Prometheus precedence, left-associative but ^", () => {
  for (const [q, tree] of [
    ["vector(4) * 2 + 1", "((vector(4) * 2) + 1)"],
    ["1 + 2 * 3", "(1 + (2 * 3))"],
    ["1 - 2 - 3", "((1 - 2) - 3)"],
    ["2 ^ 3 ^ 2", "(2 ^ (3 ^ 2))"],
    ["(1 + 2) * 3", "((1 + 2) * 3)"],
    ["1 + 2 > bool 2 * 1", "((1 + 2) > bool (2 * 1))"],
    ["vector(1) or vector(2) and vector(3)", "(vector(1) or (vector(2) and vector(3)))"],
    ["vector(1)+vector(1)", "(vector(1) + vector(1))"],
  ]) {
    expect({ q, tree: metric(q) }).toEqual({ q, tree });
  }
});

test("selectors, line filters and strings: Go escapes in double quotes, backquotes raw", () => {
  const e = parseLogQL('{app="a\\"b", level=~`e.*\\d`} |= "x" or "y" != `z\\n`');
  expect(e).toEqual({
    kind: "log",
    selector: [
      { name: "app", op: "=", value: 'a"b' },
      { name: "level", op: "=~", value: "e.*\\d" },
    ],
    stages: [
      { kind: "line", op: "|=", values: ["x", "y"] },
      { kind: "line", op: "!=", values: ["z\\n"] },
    ],
  });
});

test("range aggregations read range and offset as nanoseconds; unwrap reads its conversion", () => {
  const e = parseLogQL('sum by (level) (count_over_time({a="b"} | drop __error__ [1m30s] offset 5s))');
  expect(e).toMatchObject({
    kind: "aggregate",
    op: "sum",
    by: ["level"],
    inner: { kind: "range", op: "count_over_time", rangeNs: 90_000_000_000n, offsetNs: 5_000_000_000n },
  });
  const u = parseLogQL('quantile_over_time(0.9, {a="b"} | logfmt | unwrap duration(took) | __error__="" [1m]) by (route)');
  expect(u).toMatchObject({
    kind: "range",
    op: "quantile_over_time",
    param: 0.9,
    by: ["route"],
    unwrap: { name: "took", conv: "duration", after: [{ kind: "filter" }] },
  });
});

test("a syntax error is a 400 naming the position; a construct Sluice does not evaluate a 400 naming it", () => {
  const fault = (q: string) => {
    try {
      parseLogQL(q);
    } catch (e) {
      if (e instanceof ApiError) return { status: e.status, message: e.message };
      throw e;
    }
    return { status: 200, message: "" };
  };
  expect(fault('{a="b"')).toMatchObject({ status: 400, message: expect.stringContaining("position") });
  expect(fault("")).toMatchObject({ status: 400 });
  for (const [q, named] of [
    ['{a="b"} |> "<_> x"', "|>"],
    ['{a="b"} | logfmt --strict', "--strict"],
    ['rate_counter({a="b"} | unwrap x [1m])', "rate_counter"],
    ['approx_topk(2, count_over_time({a="b"}[1m]))', "approx_topk"],
    ['label_replace(vector(1), "a", "$1", "b", "(.*)")', "label_replace"],
  ]) {
    expect({ q, ...fault(q), named: fault(q).message.includes(named) }).toMatchObject({ q, status: 400, named: true });
  }
});

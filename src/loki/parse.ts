// parse: LogQL text → the typed tree of ast.ts, read off Grafana's own grammar (@grafana/lezer-logql). A construct
// the grammar knows but Sluice does not evaluate is a 400 naming it (contract §17).
import { parser } from "@grafana/lezer-logql";
import type { SyntaxNode } from "@lezer/common";
import { badRequest } from "../errors.ts";
import type {
  BinaryOp,
  CmpOp,
  Expr,
  LabelPredicate,
  LogExpr,
  Matcher,
  Matching,
  MatchOp,
  MetricExpr,
  RangeAgg,
  RangeOp,
  Stage,
  Unwrap,
  VectorOp,
} from "./ast.ts";
import { type Operator, precedence } from "./precedence.ts";
import { bytesOf, durationNs, goString } from "./units.ts";
import { unsupported } from "./unsupported.ts";

const LINE_OPS: readonly string[] = ["count_over_time", "rate", "bytes_over_time", "bytes_rate", "absent_over_time"];
const UNWRAP_OPS: readonly string[] = [
  "rate",
  "sum_over_time",
  "avg_over_time",
  "min_over_time",
  "max_over_time",
  "first_over_time",
  "last_over_time",
  "stddev_over_time",
  "stdvar_over_time",
  "quantile_over_time",
];
const CONVERSIONS: Record<string, Unwrap["conv"]> = { "": "number", duration: "duration", duration_seconds: "duration", bytes: "bytes" };
const VECTOR_OPS: readonly string[] = ["sum", "avg", "min", "max", "count", "stddev", "stdvar", "topk", "bottomk", "sort", "sort_desc"];
const MATCH_OPS: Record<string, MatchOp> = { "=": "=", "!=": "!=", "=~": "=~", "!~": "!~" };
const CMP_OPS: Record<string, CmpOp> = { "==": "==", "=": "==", "!=": "!=", ">": ">", ">=": ">=", "<": "<", "<=": "<=" };

/** queries parsed already, frozen: a dashboard or Explore sends the same few queries again and again */
const parsed = new Map<string, Expr>();
const PARSED_KEPT = 256;

/** parseLogQL parses a LogQL query, or throws a 400 saying where it fails or which construct is not supported. */
export function parseLogQL(text: string): Expr {
  const known = parsed.get(text);
  if (known) return known;
  const expr = deepFreeze(parseFresh(text));
  if (parsed.size >= PARSED_KEPT) parsed.clear();
  parsed.set(text, expr);
  return expr;
}

/** deepFreeze freezes a parsed query and everything in it: one AST serves every request that sends its text. */
function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== "object" || Object.isFrozen(value)) return value;
  for (const v of Object.values(value)) deepFreeze(v);
  return Object.freeze(value);
}

function parseFresh(text: string): Expr {
  if (text.trim() === "") throw badRequest("VALIDATION_QUERY_SYNTAX", 'the query is empty; send a LogQL query such as {level="error"}');
  const tree = parser.parse(text);
  tree.iterate({
    enter(n) {
      if (n.type.isError) {
        throw badRequest(
          "VALIDATION_QUERY_SYNTAX",
          `cannot parse LogQL at position ${n.from}: unexpected ${JSON.stringify(text.slice(n.from, n.from + 10) || "end of query")}`,
          {
            position: n.from,
          },
        );
      }
    },
  });
  return new Reader(text).expr(tree.topNode);
}

const kids = (n: SyntaxNode): SyntaxNode[] => {
  const out: SyntaxNode[] = [];
  for (let c = n.firstChild; c; c = c.nextSibling) out.push(c);
  return out;
};

/** found lists the outermost descendants of `n` named one of `names`, in order. */
const found = (n: SyntaxNode, names: string[]): SyntaxNode[] => kids(n).flatMap((k) => (names.includes(k.name) ? [k] : found(k, names)));

class Reader {
  constructor(private readonly text: string) {}

  private of = (n: SyntaxNode) => this.text.slice(n.from, n.to);

  expr(n: SyntaxNode): Expr {
    switch (n.name) {
      case "LogQL":
      case "Expr":
        return this.expr(this.only(n));
      case "LogExpr":
        return this.log(n);
      default:
        return this.metric(n);
    }
  }

  private only(n: SyntaxNode): SyntaxNode {
    const [first] = kids(n).filter((k) => k.name !== "LineComment");
    if (!first) throw badRequest("VALIDATION_QUERY_SYNTAX", 'the query is empty; send a LogQL query such as {level="error"}');
    return first;
  }

  private log(n: SyntaxNode): LogExpr {
    const parts = kids(n);
    const selector = parts.find((k) => k.name === "Selector");
    if (!selector) return this.log(this.sub(n, "LogExpr"));
    const pipeline = parts.find((k) => k.name === "PipelineExpr");
    return { kind: "log", selector: this.matchers(selector), stages: pipeline ? this.stages(pipeline) : [] };
  }

  private sub(n: SyntaxNode, name: string): SyntaxNode {
    const found = kids(n).find((k) => k.name === name);
    if (!found) throw unsupported(`construct ${JSON.stringify(this.of(n))}`);
    return found;
  }

  private matchers(n: SyntaxNode): Matcher[] {
    return n.getChildren("Matchers").flatMap((m) => [...this.matchers(m), ...m.getChildren("Matcher").map((x) => this.matcher(x))]);
  }

  private matcher(n: SyntaxNode): Matcher {
    const [name, op, value] = kids(n);
    return { name: this.of(name), op: MATCH_OPS[this.of(op)], value: goString(this.of(value)) };
  }

  private stages(n: SyntaxNode): Stage[] {
    return kids(n).flatMap((k) => (k.name === "PipelineExpr" ? this.stages(k) : k.name === "PipelineStage" ? this.stage(k) : []));
  }

  private stage(n: SyntaxNode): Stage[] {
    const body = kids(n).find((k) => k.name !== "Pipe");
    if (!body) throw unsupported(`stage ${JSON.stringify(this.of(n))}`);
    switch (body.name) {
      case "LineFilters":
        return this.lineFilters(body);
      case "LabelFilter":
        return [{ kind: "filter", predicate: this.predicate(body) }];
      case "LabelParser": {
        const what = this.of(body).trim();
        if (what === "json" || what === "logfmt" || what === "unpack") return [{ kind: what }];
        const arg = body.getChild("String");
        if (arg && body.getChild("Regexp")) return [{ kind: "regexp", pattern: goString(this.of(arg)) }];
        if (arg && body.getChild("Pattern")) return [{ kind: "pattern", pattern: goString(this.of(arg)) }];
        throw unsupported(`parser ${JSON.stringify(what)}`);
      }
      case "LineFormatExpr":
        return [{ kind: "line_format", template: goString(this.of(this.sub(body, "String"))) }];
      case "LabelFormatExpr":
        return [
          {
            kind: "label_format",
            items: found(body, ["LabelFormatMatcher"]).map((m) => {
              const [name, , value] = kids(m);
              return value.name === "String" ? { name: this.of(name), template: goString(this.of(value)) } : { name: this.of(name), from: this.of(value) };
            }),
          },
        ];
      case "JsonExpressionParser":
      case "LogfmtExpressionParser": {
        const fields = found(body, ["LabelExtractionExpression"]).map((x) => {
          const name = this.of(this.sub(x, "Identifier"));
          const path = x.getChild("String");
          return { name, path: path ? goString(this.of(path)) : name };
        });
        return [{ kind: body.name === "JsonExpressionParser" ? "json_fields" : "logfmt_fields", fields }];
      }
      case "LogfmtParser":
        if (this.of(body).trim() === "logfmt") return [{ kind: "logfmt" }];
        throw unsupported(`parser flags in ${JSON.stringify(this.of(body))}`);
      case "DecolorizeExpr":
        return [{ kind: "decolorize" }];
      case "DropLabelsExpr":
      case "KeepLabelsExpr": {
        const items = found(body, ["Matcher", "Identifier"]).map((c) => {
          if (c.name === "Identifier") return { name: this.of(c) };
          const m = this.matcher(c);
          return { name: m.name, matcher: m };
        });
        return [{ kind: body.name === "DropLabelsExpr" ? "drop" : "keep", items }];
      }
      default:
        throw unsupported(`stage ${JSON.stringify(this.of(body))}`);
    }
  }

  private lineFilters(n: SyntaxNode): Stage[] {
    return kids(n).flatMap((k): Stage[] => {
      if (k.name === "LineFilters") return this.lineFilters(k);
      if (k.name !== "LineFilter") return [];
      const filter = this.sub(k, "Filter");
      const op = this.of(filter).trim();
      if (op !== "|=" && op !== "!=" && op !== "|~" && op !== "!~") throw unsupported(`line filter ${JSON.stringify(op)}`);
      const strings: string[] = [];
      const visit = (c: SyntaxNode) => {
        for (const x of kids(c)) {
          if (x.name === "String") strings.push(goString(this.of(x)));
          else if (x.name === "Ip" || x.name === "FilterOp") throw unsupported(`line filter ${JSON.stringify(this.of(k))}`);
          else if (x.name !== "Filter") visit(x);
        }
      };
      visit(k);
      return [{ kind: "line", op, values: strings }];
    });
  }

  private predicate(n: SyntaxNode): LabelPredicate {
    const parts = kids(n);
    if (parts.length === 1) {
      const [p] = parts;
      if (p.name === "Matcher") return { kind: "match", matcher: this.matcher(p) };
      if (p.name === "LabelFilter") return this.predicate(p);
      if (p.name === "NumberFilter" || p.name === "UnitFilter") return this.compare(p.name === "UnitFilter" ? this.only(p) : p);
      throw unsupported(`label filter ${JSON.stringify(this.of(p))}`);
    }
    const filters = parts.filter((k) => k.name === "LabelFilter");
    if (filters.length === 2) {
      const or = parts.some((k) => k.name === "Or");
      return { kind: or ? "or" : "and", left: this.predicate(filters[0]), right: this.predicate(filters[1]) };
    }
    const inner = parts.find((k) => k.name === "LabelFilter");
    if (inner && parts.length === 3) return this.predicate(inner); // ( … )
    throw unsupported(`label filter ${JSON.stringify(this.of(n))}`);
  }

  private compare(n: SyntaxNode): LabelPredicate {
    const [name, op, value] = kids(n);
    const cmp = CMP_OPS[this.of(op)];
    const text = this.of(value).trim();
    if (!cmp) throw unsupported(`comparison ${JSON.stringify(this.of(n))}`);
    if (n.name === "DurationFilter") {
      const ns = durationNs(text);
      if (ns === undefined) throw unsupported(`duration ${JSON.stringify(text)}`);
      return { kind: "compare", name: this.of(name), op: cmp, value: Number(ns) / 1e9, unit: "duration" };
    }
    if (n.name === "BytesFilter") {
      const b = bytesOf(text);
      if (b === undefined) throw unsupported(`byte size ${JSON.stringify(text)}`);
      return { kind: "compare", name: this.of(name), op: cmp, value: b, unit: "bytes" };
    }
    if (n.name !== "NumberFilter") throw unsupported(`label filter ${JSON.stringify(this.of(n))}`);
    return { kind: "compare", name: this.of(name), op: cmp, value: Number(text.replace(/\s+/g, "")), unit: "number" };
  }

  private metric(n: SyntaxNode): MetricExpr {
    switch (n.name) {
      case "MetricExpr":
        return this.metric(this.only(n));
      case "Expr":
        return this.metric(this.only(n));
      case "LogExpr":
        throw badRequest(
          "VALIDATION_QUERY_INVALID",
          "a log query cannot be used as a metric here; wrap it in a range aggregation such as count_over_time({…}[5m])",
        );
      case "LiteralExpr":
        return { kind: "number", value: Number(this.of(n).replace(/\s+/g, "")) };
      case "VectorExpr":
        return { kind: "vector", value: Number(this.of(this.sub(n, "Number"))) };
      case "RangeAggregationExpr":
        return this.range(n);
      case "VectorAggregationExpr":
        return this.aggregate(n);
      case "BinOpExpr":
        return this.binary(n);
      case "ParenthesisExpr":
        return this.metric(kids(n).find((k) => k.name !== "(" && k.name !== ")")!);
      default:
        throw unsupported(`expression ${JSON.stringify(this.of(n))}`);
    }
  }

  private range(n: SyntaxNode): MetricExpr {
    const op = this.of(this.sub(n, "RangeOp")).trim();
    const r = this.sub(n, "LogRangeExpr");
    const unwrapNode = r.getChild("UnwrapExpr");
    if (!(unwrapNode ? UNWRAP_OPS : LINE_OPS).includes(op)) {
      throw unsupported(
        unwrapNode
          ? `range aggregation ${op} over unwrap`
          : UNWRAP_OPS.includes(op)
            ? `${op} without unwrap (add | unwrap <label>)`
            : `range aggregation ${op}`,
      );
    }
    const selector = r.getChild("Selector");
    if (!selector) throw unsupported(`range expression ${JSON.stringify(this.of(r))}`);
    const pipeline = r.getChild("PipelineExpr");
    const rangeNs = durationNs(this.of(this.sub(this.sub(r, "Range"), "Duration")).trim());
    const offset = r.getChild("OffsetExpr");
    const offsetNs = offset ? durationNs(this.of(this.sub(offset, "Duration")).trim()) : 0n;
    if (rangeNs === undefined || rangeNs <= 0n || offsetNs === undefined) throw unsupported(`range ${JSON.stringify(this.of(r))}`);
    const log: LogExpr = { kind: "log", selector: this.matchers(selector), stages: pipeline ? this.stages(pipeline) : [] };
    const out: RangeAgg = { kind: "range", op: op as RangeOp, log, rangeNs, offsetNs };
    if (unwrapNode) out.unwrap = this.unwrap(unwrapNode);
    const param = n.getChild("Number");
    if (op === "quantile_over_time") {
      if (!param) throw badRequest("VALIDATION_QUERY_INVALID", "quantile_over_time needs a quantile: quantile_over_time(0.99, …)");
      out.param = Number(this.of(param));
    }
    const grouping = n.getChild("Grouping");
    if (grouping) {
      if (!unwrapNode) throw unsupported(`grouping on ${op} (group with sum by (…) around it)`);
      const names = found(grouping, ["Identifier"]).map((c) => this.of(c));
      if (grouping.getChild("Without")) out.without = names;
      else out.by = names;
    }
    return out;
  }

  /** unwrap reads `| unwrap [conv(]label[)]` and the label filters after it (the grammar nests them). */
  private unwrap(n: SyntaxNode): Unwrap {
    const inner = n.getChild("UnwrapExpr");
    if (inner) {
      const base = this.unwrap(inner);
      const filter = n.getChild("LabelFilter");
      if (!filter) throw unsupported(`stage after unwrap ${JSON.stringify(this.of(n))}`);
      return { ...base, after: [...base.after, { kind: "filter", predicate: this.predicate(filter) }] };
    }
    const conv = n.getChild("ConvOp");
    const convText = conv ? this.of(conv).trim() : "";
    if (CONVERSIONS[convText] === undefined) throw unsupported(`unwrap conversion ${convText}()`);
    return { name: this.of(this.sub(n, "Identifier")), conv: CONVERSIONS[convText], after: [] };
  }

  private aggregate(n: SyntaxNode): MetricExpr {
    const op = this.of(this.sub(n, "VectorOp")).trim();
    if (!VECTOR_OPS.includes(op)) throw unsupported(`vector aggregation ${op}`);
    const grouping = n.getChild("Grouping");
    const param = n.getChild("Number");
    const inner = this.metric(this.sub(n, "MetricExpr"));
    const out: MetricExpr = { kind: "aggregate", op: op as VectorOp, inner };
    if (param) out.param = Number(this.of(param));
    if ((op === "topk" || op === "bottomk") && !(out.param !== undefined && out.param >= 1))
      throw badRequest("VALIDATION_QUERY_INVALID", `${op} needs a count of at least 1: ${op}(5, …)`);
    if (grouping) {
      const names = found(grouping, ["Identifier"]).map((c) => this.of(c));
      if (grouping.getChild("Without")) out.without = names;
      else out.by = names;
    }
    return out;
  }

  /** matching reads on/ignoring (…) and group_left/group_right (…) of a binary operator; undefined: none. */
  private matching(modifier: SyntaxNode): Matching | undefined {
    const onOr = modifier.getChild("OnOrIgnoringModifier");
    const group = modifier.getChild("GroupLeft") ? "left" : modifier.getChild("GroupRight") ? "right" : undefined;
    if (!onOr && !group) return undefined;
    const names = (n: SyntaxNode | null) => (n ? found(n, ["LabelName", "Identifier"]).map((c) => this.of(c)) : []);
    const out: Matching = { on: onOr !== null && onOr.getChild("On") !== null, labels: names(onOr), include: names(modifier.getChild("GroupingLabels")) };
    if (group) out.group = group;
    return out;
  }

  /**
   * binary reads a chain of binary operators. The grammar nests a chain as it comes, with no precedence (`a * 2 + 1`
   * arrives as `a * (2 + 1)`), so the chain is flattened (parentheses excepted) and rebuilt with Prometheus precedence.
   */
  private binary(n: SyntaxNode): MetricExpr {
    const operands: MetricExpr[] = [];
    const ops: Operator[] = [];
    const chain = (node: SyntaxNode) => {
      const [left, op, modifier, right] = kids(node);
      if (modifier?.name !== "BinOpModifier" || !right) throw unsupported(`binary expression ${JSON.stringify(this.of(node))}`);
      const mods = kids(modifier).map((k) => k.name);
      operand(left);
      ops.push({ op: this.of(op).trim() as BinaryOp, bool: mods.includes("Bool"), matching: this.matching(modifier) });
      operand(right);
    };
    const operand = (node: SyntaxNode) => {
      const inner = node.name === "Expr" ? this.only(node) : node;
      const bin = inner.name === "MetricExpr" ? this.only(inner) : inner;
      if (bin.name === "BinOpExpr") chain(bin);
      else operands.push(this.metric(inner));
    };
    chain(n);
    return precedence(operands, ops);
  }
}

// ast: the typed syntax tree of the LogQL that Sluice evaluates (contract §17); parse.ts builds it from Grafana's grammar.

/** MatchOp compares a label with a string or an RE2 regex (fully anchored). */
export type MatchOp = "=" | "!=" | "=~" | "!~";
/** CmpOp compares a label's number, duration or byte size. */
export type CmpOp = "==" | "!=" | ">" | ">=" | "<" | "<=";

/** Matcher is `name op "value"`, in a selector or a label filter. */
export interface Matcher {
  name: string;
  op: MatchOp;
  value: string;
}

/** LineFilter keeps lines that contain (|=), lack (!=), match (|~) or do not match (!~) any of its values (`or`). */
export interface LineFilter {
  kind: "line";
  op: "|=" | "!=" | "|~" | "!~";
  values: string[];
}

/** LabelPredicate is a label filter: a string matcher, a number comparison, or two joined by and/or. */
export type LabelPredicate =
  | { kind: "and" | "or"; left: LabelPredicate; right: LabelPredicate }
  | { kind: "match"; matcher: Matcher }
  | { kind: "compare"; name: string; op: CmpOp; value: number; unit: "number" | "duration" | "bytes" };

/** Stage is one step of a log pipeline. */
export type Stage =
  | LineFilter
  | { kind: "filter"; predicate: LabelPredicate }
  | { kind: "json" | "logfmt" | "unpack" }
  | { kind: "json_fields" | "logfmt_fields"; fields: { name: string; path: string }[] }
  | { kind: "regexp" | "pattern"; pattern: string }
  | { kind: "line_format"; template: string }
  | { kind: "label_format"; items: ({ name: string; template: string } | { name: string; from: string })[] }
  | { kind: "drop" | "keep"; items: { name: string; matcher?: Matcher }[] }
  | { kind: "decolorize" };

/** LogExpr is a stream selector and its pipeline. */
export interface LogExpr {
  kind: "log";
  selector: Matcher[];
  stages: Stage[];
}

/** LineRangeOp is every range aggregation over log lines. */
export type LineRangeOp = "count_over_time" | "rate" | "bytes_over_time" | "bytes_rate" | "absent_over_time";
/** UnwrapOp is every range aggregation over unwrapped label values (rate: their sum per second). */
export type UnwrapOp =
  | "rate"
  | "sum_over_time"
  | "avg_over_time"
  | "min_over_time"
  | "max_over_time"
  | "first_over_time"
  | "last_over_time"
  | "stddev_over_time"
  | "stdvar_over_time"
  | "quantile_over_time";
/** RangeOp is every range aggregation. */
export type RangeOp = LineRangeOp | UnwrapOp;

/** Unwrap takes a sample's value from a label, read as a number, a duration (seconds) or a byte size; `after` are the filters after it. */
export interface Unwrap {
  name: string;
  conv: "number" | "duration" | "bytes";
  after: Stage[];
}
/** RangeAgg applies a range aggregation to a log query over `(t − range − offset, t − offset]`. */
export interface RangeAgg {
  kind: "range";
  op: RangeOp;
  log: LogExpr;
  rangeNs: bigint;
  offsetNs: bigint;
  unwrap?: Unwrap;
  /** quantile_over_time's φ */
  param?: number;
  by?: string[];
  without?: string[];
}

/** VectorOp is every vector aggregation. */
export type VectorOp = "sum" | "avg" | "min" | "max" | "count" | "stddev" | "stdvar" | "topk" | "bottomk" | "sort" | "sort_desc";
/** VectorAgg aggregates a vector's samples per group of `by` labels (or all labels but `without`). */
export interface VectorAgg {
  kind: "aggregate";
  op: VectorOp;
  by?: string[];
  without?: string[];
  param?: number;
  inner: MetricExpr;
}

/** BinaryOp is every binary operator between scalars and vectors. */
export type BinaryOp = "+" | "-" | "*" | "/" | "%" | "^" | "==" | "!=" | ">" | ">=" | "<" | "<=" | "and" | "or" | "unless";
/** Matching says which labels pair two vectors' samples (on: only these; else all but these) and which side may repeat. */
export interface Matching {
  on: boolean;
  labels: string[];
  group?: "left" | "right";
  /** labels copied from the "one" side onto the result (group_left (…), group_right (…)) */
  include: string[];
}

/** Binary joins two metric expressions; comparisons filter unless `bool`. */
export interface Binary {
  kind: "binary";
  op: BinaryOp;
  bool: boolean;
  matching?: Matching;
  left: MetricExpr;
  right: MetricExpr;
}

/** MetricExpr is every expression that yields samples. */
export type MetricExpr = RangeAgg | VectorAgg | Binary | { kind: "number"; value: number } | { kind: "vector"; value: number };

/** Expr is a whole LogQL query. */
export type Expr = LogExpr | MetricExpr;

// precedence: a chain of LogQL binary operators built into a tree by Prometheus precedence (^ right-associative,
// then * / %, + -, comparisons, and/unless, or). Grafana's grammar nests a chain as it comes, without precedence.
import type { BinaryOp, Matching, MetricExpr } from "./ast.ts";

const LEVEL: Record<string, number> = {
  "^": 6,
  "*": 5,
  "/": 5,
  "%": 5,
  "+": 4,
  "-": 4,
  "==": 3,
  "!=": 3,
  ">": 3,
  ">=": 3,
  "<": 3,
  "<=": 3,
  and: 2,
  unless: 2,
  or: 1,
};

/** Operator is one binary operator of a chain with its modifiers. */
export type Operator = { op: BinaryOp; bool: boolean; matching?: Matching };

/** precedence builds the tree of `a op b op c …` by Prometheus precedence: left-associative, except `^`. */
export function precedence(operands: MetricExpr[], ops: Operator[]): MetricExpr {
  if (ops.length === 0) return operands[0];
  // split at the loosest operator: its last occurrence (left-associative), or its first for `^` (right-associative)
  const loosest = Math.min(...ops.map((o) => LEVEL[o.op]));
  const at = loosest === LEVEL["^"] ? ops.findIndex((o) => LEVEL[o.op] === loosest) : ops.findLastIndex((o) => LEVEL[o.op] === loosest);
  const { op, bool, matching } = ops[at];
  return {
    kind: "binary",
    op,
    bool,
    ...(matching ? { matching } : {}),
    left: precedence(operands.slice(0, at + 1), ops.slice(0, at)),
    right: precedence(operands.slice(at + 1), ops.slice(at + 1)),
  };
}

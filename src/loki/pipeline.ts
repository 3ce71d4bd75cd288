// pipeline: a LogQL selector and pipeline compiled once into tests and steps run on each entry (contract §17).
// Regexes run on RE2 (re2js): linear time whatever the pattern or the line.
import { RE2JS } from "re2js";
import { badRequest } from "../errors.ts";
import type { LabelPredicate, LogExpr, Matcher, Stage } from "./ast.ts";
import { type Fields, jsonFieldsStage, patternStage, regexpStage, template, unpackStage } from "./extract.ts";
import { type Labels, type LokiEntry, labelName } from "./labels.ts";
import { parseLogfmt } from "./logfmt.ts";
import { bytesOf, durationNs } from "./units.ts";

/** Processed is an entry after the pipeline: its labels by kind and its (possibly rewritten) line. */
export interface Processed {
  stream: Labels;
  metadata: Labels;
  parsed: Labels;
  line: string;
}

/** Compiled is a log query ready to run: `selects` tests the stream labels, `run` the pipeline (null: filtered out). */
export interface Compiled {
  selects(stream: Labels): boolean;
  run(e: LokiEntry): Processed | null;
  /** the line filters that come before any other stage, on an entry's stored line: false drops it undecoded */
  keepsLine(line: string): boolean;
}

/** lineTest compiles a line filter into a test of a line. */
function lineTest(s: Extract<Stage, { kind: "line" }>): (line: string) => boolean {
  const tests = s.values.map((v) => (s.op === "|=" || s.op === "!=" ? (line: string) => line.includes(v) : regex(v, false)));
  const positive = s.op === "|=" || s.op === "|~";
  return positive ? (line) => tests.some((t) => t(line)) : (line) => !tests.some((t) => t(line));
}

/** regexes compiled already, by their anchored source: a dashboard sends the same few patterns with every refresh */
const compiled = new Map<string, RE2JS>();
const COMPILED_KEPT = 256;

function regex(pattern: string, anchored: boolean): (s: string) => boolean {
  const source = anchored ? `^(?:${pattern})$` : pattern;
  let re = compiled.get(source);
  if (!re) {
    try {
      re = RE2JS.compile(source);
    } catch (e) {
      throw badRequest("VALIDATION_QUERY_INVALID", `invalid regular expression ${JSON.stringify(pattern)}: ${(e as Error).message}; write it in RE2 syntax`);
    }
    if (compiled.size >= COMPILED_KEPT) compiled.clear();
    compiled.set(source, re);
  }
  const one = re;
  return anchored ? (s) => one.matches(s) : (s) => one.matcher(s).find();
}

/** matcherTest compiles `name op value` into a test of a label's value ("" when absent), regexes fully anchored. */
export function matcherTest(m: Matcher): (value: string) => boolean {
  if (m.op === "=") return (v) => v === m.value;
  if (m.op === "!=") return (v) => v !== m.value;
  const re = regex(m.value, true);
  return m.op === "=~" ? re : (v) => !re(v);
}

const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*[a-zA-Z]`, "g"); // escape sequences of terminal colours

type Step = (p: Processed) => boolean;

const lookup = (p: Processed, name: string): string | undefined => p.parsed[name] ?? p.stream[name] ?? p.metadata[name];

function setError(p: Processed, error: string, details: string) {
  if (p.parsed.__error__ === undefined) {
    p.parsed.__error__ = error;
    p.parsed.__error_details__ = details;
  }
}

function predicate(pred: LabelPredicate): Step {
  switch (pred.kind) {
    case "and": {
      const [l, r] = [predicate(pred.left), predicate(pred.right)];
      return (p) => l(p) && r(p);
    }
    case "or": {
      const [l, r] = [predicate(pred.left), predicate(pred.right)];
      return (p) => l(p) || r(p);
    }
    case "match": {
      const test = matcherTest(pred.matcher);
      const name = pred.matcher.name;
      return (p) => test(lookup(p, name) ?? "");
    }
    case "compare": {
      const { name, op, value, unit } = pred;
      return (p) => {
        const text = lookup(p, name);
        if (text === undefined) return op === "!=";
        const n = unit === "duration" ? secondsOf(text) : unit === "bytes" ? bytesOf(text) : Number(text.trim() === "" ? Number.NaN : text);
        if (n === undefined || Number.isNaN(n)) {
          setError(p, "LabelFilterErr", `cannot read ${JSON.stringify(text)} of label ${name} as a ${unit}`);
          return true; // Loki keeps the line and marks it, so that `__error__` shows why
        }
        return op === "==" ? n === value : op === "!=" ? n !== value : op === ">" ? n > value : op === ">=" ? n >= value : op === "<" ? n < value : n <= value;
      };
    }
  }
}

function secondsOf(text: string): number | undefined {
  const ns = durationNs(text.trim());
  return ns === undefined ? undefined : Number(ns) / 1e9;
}

/** fields is the view of an entry that the extraction stages work on. */
function fields(p: Processed): Fields {
  return {
    get line() {
      return p.line;
    },
    set line(v: string) {
      p.line = v;
    },
    get: (name) => lookup(p, name),
    set: (name, value) => addParsed(p, name, value),
    remove(name) {
      delete p.parsed[name];
      delete p.stream[name];
      delete p.metadata[name];
    },
  };
}

function addParsed(p: Processed, name: string, value: string) {
  const clean = labelName(name);
  const target = p.stream[clean] !== undefined ? `${clean}_extracted` : clean; // as Loki: a parsed label never hides a stream label
  p.parsed[target] = value;
}

function jsonLeaves(p: Processed, obj: Record<string, unknown>, prefix: string) {
  for (const [k, v] of Object.entries(obj)) {
    const name = prefix === "" ? k : `${prefix}_${k}`;
    if (Array.isArray(v)) continue;
    if (v !== null && typeof v === "object") jsonLeaves(p, v as Record<string, unknown>, name);
    else addParsed(p, name, v === null ? "" : String(v));
  }
}

function stage(s: Stage): Step {
  switch (s.kind) {
    case "line": {
      const test = lineTest(s);
      return (p) => test(p.line);
    }
    case "filter":
      return predicate(s.predicate);
    case "json":
      return (p) => {
        let v: unknown;
        try {
          v = JSON.parse(p.line);
        } catch (e) {
          setError(p, "JSONParserErr", (e as Error).message);
          return true;
        }
        if (v === null || typeof v !== "object" || Array.isArray(v)) setError(p, "JSONParserErr", "the line is no JSON object");
        else jsonLeaves(p, v as Record<string, unknown>, "");
        return true;
      };
    case "logfmt":
      return (p) => {
        const pairs = parseLogfmt(p.line);
        if (pairs === null) setError(p, "LogfmtParserErr", "the line is not logfmt");
        else for (const [k, v] of pairs) addParsed(p, k, v);
        return true;
      };
    case "json_fields": {
      const extract = jsonFieldsStage(s.fields);
      return (p) => {
        extract(fields(p), (details) => setError(p, "JSONParserErr", details));
        return true;
      };
    }
    case "logfmt_fields":
      return (p) => {
        const pairs = parseLogfmt(p.line);
        if (pairs === null) setError(p, "LogfmtParserErr", "the line is not logfmt");
        else for (const { name, path } of s.fields) for (const [k, v] of pairs) if (k === path) addParsed(p, name, v);
        return true;
      };
    case "unpack":
      return (p) => {
        unpackStage(fields(p), (details) => setError(p, "JSONParserErr", details));
        return true;
      };
    case "regexp":
    case "pattern": {
      const extract = s.kind === "regexp" ? regexpStage(s.pattern) : patternStage(s.pattern);
      return (p) => {
        extract(fields(p));
        return true;
      };
    }
    case "line_format": {
      const render = template(s.template);
      return (p) => {
        p.line = render(fields(p));
        return true;
      };
    }
    case "label_format": {
      const items = s.items.map((i) => ({
        name: i.name,
        render: "template" in i ? template(i.template) : (f: Fields) => f.get(i.from) ?? "",
        from: "from" in i ? i.from : undefined,
      }));
      return (p) => {
        const f = fields(p);
        const values = items.map((i) => i.render(f)); // every template sees the labels as they were before this stage
        items.forEach((i, k) => {
          if (i.from !== undefined && i.from !== i.name) f.remove(i.from);
          p.parsed[i.name] = values[k];
        });
        return true;
      };
    }
    case "decolorize":
      return (p) => {
        p.line = p.line.replace(ANSI, "");
        return true;
      };
    case "drop":
    case "keep": {
      const items = s.items.map((i) => ({ name: i.name, test: i.matcher ? matcherTest(i.matcher) : undefined }));
      const listed = (name: string, value: string) => items.some((i) => i.name === name && (!i.test || i.test(value)));
      const drop = s.kind === "drop";
      return (p) => {
        for (const set of [p.stream, p.metadata, p.parsed]) for (const [k, v] of Object.entries(set)) if (listed(k, v) === drop) delete set[k];
        return true;
      };
    }
  }
}

/** compileStages compiles pipeline stages into one step: false when the entry is filtered out. */
export function compileStages(stages: Stage[]): (p: Processed) => boolean {
  const steps = stages.map(stage);
  return (p) => steps.every((step) => step(p));
}

/** setSampleError marks an entry whose unwrapped label could not be read, as Loki does. */
export const setSampleError = (p: Processed, details: string) => setError(p, "SampleExtractionErr", details);

/** lookupLabel finds a label among the parsed, stream and structured-metadata labels, in that order. */
export const lookupLabel = (p: Processed, name: string): string | undefined => lookup(p, name);

/** PUSHED_LABELS are the labels whose matchers pushDown (select.ts) answers exactly: an entry it selects has passed them. */
export const PUSHED_LABELS: ReadonlySet<string> = new Set(["level", "detected_level", "environment"]);

/** compileLog compiles a log query's selector and pipeline; matchers on `answered` labels are not run again on each entry. */
export function compileLog(expr: LogExpr, answered: ReadonlySet<string> = new Set()): Compiled {
  const all = expr.selector.map((m) => ({ name: m.name, test: matcherTest(m) }));
  const selector = all.filter((m) => !answered.has(m.name));
  const steps = expr.stages.map(stage);
  const leading = expr.stages.findIndex((s) => s.kind !== "line");
  const lineTests = (leading < 0 ? expr.stages : expr.stages.slice(0, leading)).map((s) => lineTest(s as Extract<Stage, { kind: "line" }>));
  return {
    keepsLine: (line) => lineTests.every((t) => t(line)),
    selects: (stream) => all.every((m) => m.test(stream[m.name] ?? "")),
    run(e) {
      if (!selector.every((m) => m.test(e.stream[m.name] ?? ""))) return null;
      if (steps.length === 0) return { stream: e.stream, metadata: e.metadata, parsed: {}, line: e.line }; // nothing changes them: no copies
      const p: Processed = { stream: { ...e.stream }, metadata: { ...e.metadata }, parsed: {}, line: e.line };
      for (const step of steps) if (!step(p)) return null;
      return p;
    },
  };
}

// extract: the pipeline stages that read labels out of a line or rewrite it: regexp, pattern, unpack, line_format,
// label_format (contract §17). Templates take `{{.label}}` and `{{__line__}}` only: anything else is named in a 400.
import { RE2JS } from "re2js";
import { badRequest } from "../errors.ts";
import { unsupported } from "./unsupported.ts";

/** Fields is what an extraction stage works on: the line and a way to read and set labels. */
export interface Fields {
  line: string;
  get(name: string): string | undefined;
  set(name: string, value: string): void;
  remove(name: string): void;
}

/** regexpStage adds the named groups of the first match of an RE2 pattern as labels. */
export function regexpStage(pattern: string): (f: Fields) => void {
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern);
  } catch (e) {
    throw badRequest("VALIDATION_QUERY_INVALID", `invalid regexp parser pattern ${JSON.stringify(pattern)}: ${(e as Error).message}`);
  }
  const names = Object.entries(re.namedGroups()) as [string, number][];
  if (names.length === 0)
    throw badRequest("VALIDATION_QUERY_INVALID", `the regexp parser needs named groups such as (?P<status>\\d+) (got ${JSON.stringify(pattern)})`);
  return (f) => {
    const m = re.matcher(f.line);
    if (!m.find()) return;
    for (const [name, index] of names) {
      const v = m.group(index);
      if (v !== null && v !== undefined) f.set(name, v);
    }
  };
}

type Piece = { literal: string } | { capture: string };

/** patternStage matches `<name> literal <_> …` against the line and adds the named captures (none when it does not match). */
export function patternStage(pattern: string): (f: Fields) => void {
  const pieces: Piece[] = [];
  for (const part of pattern.split(/(<[^<>]*>)/)) {
    if (part === "") continue;
    const capture = /^<([a-zA-Z_][a-zA-Z0-9_]*)>$/.exec(part);
    pieces.push(capture ? { capture: capture[1] } : { literal: part });
  }
  for (let i = 1; i < pieces.length; i++) {
    if ("capture" in pieces[i] && "capture" in pieces[i - 1])
      throw badRequest("VALIDATION_QUERY_INVALID", `pattern ${JSON.stringify(pattern)} has two captures side by side; put a literal between them`);
  }
  if (!pieces.some((p) => "capture" in p && p.capture !== "_"))
    throw badRequest("VALIDATION_QUERY_INVALID", `pattern ${JSON.stringify(pattern)} names no capture such as <status>`);
  return (f) => {
    const found: [string, string][] = [];
    let at = 0;
    const line = f.line;
    for (let i = 0; i < pieces.length; i++) {
      const p = pieces[i];
      if ("literal" in p) {
        if (!line.startsWith(p.literal, at)) return;
        at += p.literal.length;
        continue;
      }
      const next = pieces[i + 1];
      const end = next && "literal" in next ? line.indexOf(next.literal, at) : line.length;
      if (end < 0) return;
      found.push([p.capture, line.slice(at, end)]);
      at = end;
    }
    for (const [name, value] of found) if (name !== "_") f.set(name, value);
  };
}

/** unpackStage reads a JSON object line packed by Promtail: `_entry` becomes the line, the other string fields labels. */
export function unpackStage(f: Fields, onError: (details: string) => void): void {
  let v: unknown;
  try {
    v = JSON.parse(f.line);
  } catch (e) {
    onError((e as Error).message);
    return;
  }
  if (v === null || typeof v !== "object" || Array.isArray(v)) return onError("the line is no JSON object");
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    if (k === "_entry" && typeof x === "string") f.line = x;
    else if (typeof x === "string") f.set(k, x);
  }
}

/** template compiles a line_format or label_format template of `{{.label}}` and `{{__line__}}` actions. */
export function template(text: string): (f: Fields) => string {
  const parts: ((f: Fields) => string)[] = [];
  let last = 0;
  for (const m of text.matchAll(/\{\{-?\s*(.*?)\s*-?\}\}/g)) {
    const literal = text.slice(last, m.index);
    parts.push(() => literal);
    const action = m[1];
    const label = /^\.([a-zA-Z_][a-zA-Z0-9_]*)$/.exec(action);
    if (label) parts.push((f) => f.get(label[1]) ?? "");
    else if (action === "__line__") parts.push((f) => f.line);
    else throw unsupported(`template action {{${action}}} (only {{.label}} and {{__line__}} are)`);
    last = m.index + m[0].length;
  }
  const rest = text.slice(last);
  parts.push(() => rest);
  return (f) => parts.map((p) => p(f)).join("");
}

/** jsonPath reads `a.b[0]["c.d"]` into the keys and indexes it walks; undefined when it is no path. */
export function jsonPath(path: string): (string | number)[] | undefined {
  const out: (string | number)[] = [];
  const re = /\.?([a-zA-Z_][a-zA-Z0-9_-]*)|\[(\d+)\]|\[\s*"((?:[^"\\]|\\.)*)"\s*\]|\[\s*'([^']*)'\s*\]/gy;
  let at = 0;
  while (at < path.length) {
    re.lastIndex = at;
    const m = re.exec(path);
    if (!m) return undefined;
    out.push(m[1] ?? (m[2] !== undefined ? Number(m[2]) : (m[3] ?? m[4])));
    at = re.lastIndex;
  }
  return out.length > 0 ? out : undefined;
}

/** jsonFieldsStage extracts only the named fields of a JSON line, each by its path (`| json status="response.code"`). */
export function jsonFieldsStage(fields: { name: string; path: string }[]): (f: Fields, onError: (details: string) => void) => void {
  const paths = fields.map((x) => {
    const steps = jsonPath(x.path);
    if (!steps) throw badRequest("VALIDATION_QUERY_INVALID", `cannot read the json path ${JSON.stringify(x.path)}: write it as a.b[0] or a["b.c"]`);
    return { name: x.name, steps };
  });
  return (f, onError) => {
    let v: unknown;
    try {
      v = JSON.parse(f.line);
    } catch (e) {
      onError((e as Error).message);
      return;
    }
    for (const { name, steps } of paths) {
      let at: unknown = v;
      for (const step of steps) at = at !== null && typeof at === "object" ? (at as Record<string | number, unknown>)[step] : undefined;
      if (at === undefined) continue;
      f.set(name, at === null ? "" : typeof at === "object" ? JSON.stringify(at) : String(at));
    }
  };
}

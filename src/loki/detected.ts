// detected: the fields Grafana offers for a log query (detected_fields, detected_field/{name}/values): structured
// metadata, and what json or logfmt finds in the lines, read from the newest matching entries.
import { parseLogfmt } from "./logfmt.ts";
import type { Selected } from "./select.ts";
import { bytesOf, durationNs } from "./units.ts";
import { flatten, labelName } from "./labels.ts";

/** DetectedField is one field as Grafana lists it. */
export interface DetectedField {
  label: string;
  type: "int" | "float" | "boolean" | "duration" | "bytes" | "string";
  cardinality: number;
  parsers: string[] | null;
}

/** fieldsOf is an entry's fields: its structured metadata (no parser), and its line's json or logfmt fields. */
export function fieldsOf({ out }: Selected): { parser: string | null; values: Record<string, string> }[] {
  const found: { parser: string | null; values: Record<string, string> }[] = [{ parser: null, values: { ...out.metadata, ...out.parsed } }];
  const line = out.line.trim();
  if (line.startsWith("{")) {
    try {
      const v = JSON.parse(line);
      if (v && typeof v === "object" && !Array.isArray(v)) found.push({ parser: "json", values: flatten(v as Record<string, unknown>, "", {}) });
      return found;
    } catch {
      // not JSON: logfmt may still read it
    }
  }
  const pairs = parseLogfmt(line);
  if (pairs?.some(([, v]) => v !== "")) found.push({ parser: "logfmt", values: Object.fromEntries(pairs.map(([k, v]) => [labelName(k), v])) });
  return found;
}

function typeOf(values: Iterable<string>): DetectedField["type"] {
  const all = [...values];
  const every = (test: (v: string) => boolean) => all.length > 0 && all.every(test);
  if (every((v) => /^-?\d+$/.test(v))) return "int";
  if (every((v) => v.trim() !== "" && !Number.isNaN(Number(v)))) return "float";
  if (every((v) => v === "true" || v === "false")) return "boolean";
  if (every((v) => /[a-zµ]$/.test(v) && durationNs(v) !== undefined)) return "duration";
  if (every((v) => /[a-zA-Z]$/.test(v) && bytesOf(v) !== undefined)) return "bytes";
  return "string";
}

/** detectFields lists the fields of the given entries with their type, number of distinct values and parsers. */
export function detectFields(entries: Selected[]): { fields: DetectedField[]; values: Map<string, Set<string>> } {
  const values = new Map<string, Set<string>>();
  const parsers = new Map<string, Set<string>>();
  for (const e of entries) {
    for (const { parser, values: vs } of fieldsOf(e)) {
      for (const [k, v] of Object.entries(vs)) {
        if (k === "sluice_id" || k.startsWith("__")) continue; // an id a row, and the pipeline's own error labels
        let set = values.get(k);
        if (!set) values.set(k, (set = new Set()));
        set.add(v);
        if (!parsers.has(k)) parsers.set(k, new Set());
        if (parser) parsers.get(k)!.add(parser);
      }
    }
  }
  const fields = [...values].map(([label, set]): DetectedField => {
    const ps = [...(parsers.get(label) ?? [])].sort();
    return { label, type: typeOf(set), cardinality: set.size, parsers: ps.length > 0 ? ps : null };
  });
  fields.sort((a, b) => (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
  return { fields, values };
}

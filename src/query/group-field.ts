// group-field: the fields that hits group by and facets count (contract §10): level, action, tag, environment or an
// object path, and the groups one entry falls in (a value's text form as `=` sees it; none is the null group).
import type { Environment } from "../schema.ts";
import type { Block, Entry } from "../storage/format/block.ts";
import { EntryView } from "../storage/format/block.ts";
import { objectPath, pathText } from "../storage/format/object-path.ts";
import { OBJECT_FACETS, type ObjectFacet } from "./ast.ts";
import { fieldError } from "./explore-request.ts";
import { textForm, walk } from "./match.ts";

/** GroupField is a field to group by, with its canonical name. */
export type GroupField = { name: string } & ({ kind: "level" | "action" | "tag" | "environment" } | { kind: "path"; facet: ObjectFacet; path: string[] });

/** parseGroupField reads a field name (`level`, `metadata.http.status`, …) or throws the 400 naming `param`. */
export function parseGroupField(value: unknown, param: string): GroupField {
  if (typeof value !== "string") throw fieldError(param, `${param} must be a field name such as "level" or "metadata.status"`);
  if (value === "level" || value === "action" || value === "tag" || value === "environment") return { name: value, kind: value };
  const [root, ...path] = value.split(".");
  if ((OBJECT_FACETS as readonly string[]).includes(root) && path.length > 0 && !path.includes("")) {
    return { name: value, kind: "path", facet: root as ObjectFacet, path };
  }
  throw fieldError(
    param,
    `${JSON.stringify(value)} is not a field to group by: use level, action, tag, environment or an object path such as metadata.status (one key between each pair of dots)`,
  );
}

/**
 * groupReader returns a function giving the groups entry i of `block` falls in: one text form, or none (the null group: missing, null, an
 * object or an array); with `tag`, each distinct tag. The array it returns is reused by the next call.
 */
export function groupReader(field: GroupField, env: Environment): (block: Block, i: number) => readonly string[] {
  const ofEntry = entryGroupReader(field, env);
  const view = new EntryView(undefined as unknown as Block, 0);
  const viewed = (b: Block, i: number) => {
    view.b = b;
    view.i = i;
    return ofEntry(view);
  };
  if (field.kind !== "path") return viewed;
  const one: string[] = [""];
  const none: string[] = [];
  const compiled = objectPath(OBJECT_FACETS.indexOf(field.facet), field.path);
  return (b, i) => {
    const stored = b.objectsText(i);
    if (stored === undefined) return viewed(b, i); // a block of an earlier format: its objects come parsed
    const text = stored === null ? undefined : pathText(stored, compiled); // read off the text, unparsed
    if (text === undefined) return none;
    one[0] = text;
    return one;
  };
}

/** entryGroupReader is groupReader for an entry whose objects are parsed (one being written, or of an older block): the same groups. */
export function entryGroupReader(field: GroupField, env: Environment): (e: Entry) => readonly string[] {
  const one: string[] = [""];
  const none: string[] = [];
  const only = (text: string) => {
    one[0] = text;
    return one;
  };
  switch (field.kind) {
    case "level":
      return (e) => only(e.level);
    case "action":
      return (e) => only(e.action);
    case "environment":
      return () => only(env);
    case "tag":
      return (e) => (e.tags.length < 2 ? e.tags : [...new Set(e.tags)]); // a tag twice in one entry counts once
    case "path":
      return (e) => {
        const text = textForm(walk(e, field.facet, field.path));
        return text === undefined ? none : only(text);
      };
  }
}

/**
 * countBlockGroups counts the groups of a block's entries at `positions` (null: all) column-wise, without a string
 * per entry: `add` gets each group's text (null: the null group) and count. False when the field or the block's
 * format has no such column (then count entry by entry).
 */
export function countBlockGroups(
  field: GroupField,
  env: Environment,
  block: Block,
  positions: readonly number[] | null,
  add: (text: string | null, count: number) => void,
): boolean {
  const n = positions ? positions.length : block.size;
  if (field.kind === "environment") {
    add(env, n);
    return true;
  }
  if (field.kind === "level" || field.kind === "action") {
    const col = block.codes(field.kind);
    if (!col) return false;
    const counts = new Uint32Array(col.values.length);
    if (positions) for (const i of positions) counts[col.codes[i]]++;
    else for (let i = 0; i < block.size; i++) counts[col.codes[i]]++;
    for (let c = 0; c < counts.length; c++) if (counts[c] > 0) add(col.values[c], counts[c]);
    return true;
  }
  if (field.kind === "tag") {
    const col = block.tagCodes();
    if (!col) return false;
    const counts = new Uint32Array(col.values.length);
    let untagged = 0;
    const one = (i: number) => {
      const start = col.starts[i];
      const end = col.starts[i + 1];
      if (start === end) untagged++;
      for (let k = start; k < end; k++) {
        let repeated = false; // a tag twice in one entry counts once
        for (let j = start; j < k && !repeated; j++) repeated = col.codes[j] === col.codes[k];
        if (!repeated) counts[col.codes[k]]++;
      }
    };
    if (positions) for (const i of positions) one(i);
    else for (let i = 0; i < block.size; i++) one(i);
    for (let c = 0; c < counts.length; c++) if (counts[c] > 0) add(col.values[c], counts[c]);
    if (untagged > 0) add(null, untagged);
    return true;
  }
  return false;
}

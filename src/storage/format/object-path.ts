// object-path: the value at a path of an entry's objects, read off their stored JSON text without parsing all of it.
//
// A block stores an entry's objects as JSON.stringify([actor, target, context, metadata]) (block.ts): no whitespace,
// no repeated key, every key written as JSON.stringify writes it. So a key is found by comparing its stored text
// with JSON.stringify(key), and everything else is skipped by its brackets and quotes. Counting one path over many
// entries (facets, hits grouped by a path) then costs a walk over the text instead of building every object.

/** ObjectPath is a path compiled for reading stored text: the element of the objects' array, and each key's JSON text. */
export interface ObjectPath {
  element: number;
  keys: string[];
}

/** objectPath compiles the path `keys` under the objects' element `element` (0 actor, 1 target, 2 context, 3 metadata). */
export function objectPath(element: number, keys: readonly string[]): ObjectPath {
  return { element, keys: keys.map((k) => JSON.stringify(k)) };
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** skipString is the index just past the string whose opening quote is at `at` (the text's end when it is unclosed). */
export function skipString(s: string, at: number): number {
  let i = at + 1;
  for (;;) {
    const q = s.indexOf('"', i);
    if (q < 0) return s.length;
    let slashes = 0;
    for (let j = q - 1; s.charCodeAt(j) === BACKSLASH; j--) slashes++;
    if (slashes % 2 === 0) return q + 1;
    i = q + 1;
  }
}

// the index just past the value starting at `at`
function skipValue(s: string, at: number): number {
  const c = s.charCodeAt(at);
  if (c === QUOTE) return skipString(s, at);
  if (c !== OPEN_BRACE && c !== OPEN_BRACKET) {
    let i = at;
    for (let d = s.charCodeAt(i); d !== COMMA && d !== CLOSE_BRACE && d !== CLOSE_BRACKET && i < s.length; d = s.charCodeAt(++i));
    return i;
  }
  let depth = 0;
  let i = at;
  while (i < s.length) {
    const d = s.charCodeAt(i);
    if (d === QUOTE) {
      i = skipString(s, i);
      continue;
    }
    if (d === OPEN_BRACE || d === OPEN_BRACKET) depth++;
    else if (d === CLOSE_BRACE || d === CLOSE_BRACKET) {
      depth--;
      if (depth === 0) return i + 1;
    }
    i++;
  }
  return i;
}

/** splitObjects cuts an entry's stored objects text into the JSON texts of actor, target, context and metadata. */
export function splitObjects(text: string): [string, string, string, string] {
  const out: string[] = [];
  let i = 1; // past the array's "["
  for (let e = 0; e < 4; e++) {
    const end = skipValue(text, i);
    out.push(text.slice(i, end));
    i = end + 1;
  }
  return out as [string, string, string, string];
}

// the index of the value of `key` (its JSON text) in the object starting at `at`, or -1
function findKey(s: string, at: number, key: string): number {
  if (s.charCodeAt(at) !== OPEN_BRACE) return -1;
  let i = at + 1;
  while (s.charCodeAt(i) === QUOTE) {
    if (s.startsWith(key, i) && s.charCodeAt(i + key.length) === COLON) return i + key.length + 1;
    i = skipValue(s, skipString(s, i) + 1);
    if (s.charCodeAt(i) !== COMMA) return -1;
    i++;
  }
  return -1;
}

/**
 * pathText is the text form of the scalar at `path` in an entry's stored objects text (as `=` compares it: a string
 * itself, a number or boolean as JSON writes it), or undefined when it is missing, null, an object or an array.
 */
export function pathText(text: string, path: ObjectPath): string | undefined {
  const last = path.keys[path.keys.length - 1];
  if (!text.includes(last)) return undefined; // the key is written nowhere: most entries without the path end here
  let i = 1; // past the array's "["
  for (let e = 0; e < path.element; e++) i = skipValue(text, i) + 1;
  for (const key of path.keys) {
    i = findKey(text, i, key);
    if (i < 0) return undefined;
  }
  const c = text.charCodeAt(i);
  if (c === QUOTE) {
    const end = skipString(text, i);
    const raw = text.slice(i + 1, end - 1);
    return raw.includes("\\") ? (JSON.parse(text.slice(i, end)) as string) : raw;
  }
  if (c === OPEN_BRACE || c === OPEN_BRACKET || c === 0x6e /* n of null */) return undefined;
  return text.slice(i, skipValue(text, i)); // a number or true/false, as JSON.stringify wrote it
}

// query-text: what the explorer does with query text (contract §6): add a term for a click, find the words to
// highlight, and find the term under the cursor for completion.

/** quote writes a value as the query language reads it: bare when it can be, else double-quoted with escapes. */
export function quote(value: string): string {
  if (/^[^\s",=!~<>@\\]+$/.test(value) && value !== "null") return value;
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

/** terms splits a query into its terms (spaces outside quotes separate them). */
export function terms(q: string): string[] {
  const out: string[] = [];
  let cur = "";
  let inQuote = false;
  for (let i = 0; i < q.length; i++) {
    const c = q[i];
    if (inQuote && c === "\\" && i + 1 < q.length) {
      cur += c + q[++i];
      continue;
    }
    if (c === '"' && (inQuote || cur === "" || /[=~<>@,!]$/.test(cur))) inQuote = !inQuote;
    if (c === " " && !inQuote) {
      if (cur) out.push(cur);
      cur = "";
    } else cur += c;
  }
  if (cur) out.push(cur);
  return out;
}

/** withTerm adds `field op value` to a query, dropping the opposite term and never adding one twice. */
export function withTerm(q: string, field: string, exclude: boolean, value: string | null): string {
  const v = value === null ? "null" : quote(value);
  const term = `${field}${exclude ? "!=" : "="}${v}`;
  const opposite = `${field}${exclude ? "=" : "!="}${v}`;
  const kept = terms(q).filter((t) => t !== opposite && t !== term);
  return [...kept, term].join(" ");
}

const OPS = ["!=", "!~", "<=", ">=", "=", "~", "<", ">", "@"];

/** splitTerm finds a term's facet, operator and value ("" facet: a free word). */
export function splitTerm(t: string): { facet: string; op: string; value: string } {
  if (t.startsWith('"')) return { facet: "", op: "", value: t };
  let best = -1;
  let op = "";
  for (const o of OPS) {
    const i = t.indexOf(o);
    if (i >= 0 && (best < 0 || i < best || (i === best && o.length > op.length))) {
      best = i;
      op = o;
    }
  }
  return best < 0 ? { facet: "", op: "", value: t } : { facet: t.slice(0, best), op, value: t.slice(best + op.length) };
}

const unquote = (v: string) => (v.startsWith('"') && v.endsWith('"') && v.length >= 2 ? v.slice(1, -1).replace(/\\(["\\])/g, "$1") : v);

/** highlights are the texts to mark in actions and messages: free words and phrases, and the values of text matches. */
export function highlights(q: string): string[] {
  const out: string[] = [];
  for (const t of terms(q)) {
    const { facet, op, value } = splitTerm(t);
    if (facet === "" || ((facet === "message" || facet === "action") && (op === "~" || op === "@" || op === "="))) {
      for (const part of unquote(value).split(op === "~" ? "*" : /[^\p{L}\p{N}]+/u)) if (part.trim().length > 0) out.push(part.toLowerCase());
    }
  }
  return [...new Set(out)].sort((a, b) => b.length - a.length);
}

/** marks splits a text into runs, each marked or not, where any of the highlight texts occurs (case-insensitively). */
export function marks(text: string, hl: string[]): { text: string; mark: boolean }[] {
  if (hl.length === 0 || text === "") return [{ text, mark: false }];
  const lower = text.toLowerCase();
  const runs: { text: string; mark: boolean }[] = [];
  let i = 0;
  let plain = 0;
  // lowercasing can change lengths for a few characters; then nothing is marked rather than the wrong run
  if (lower.length !== text.length) return [{ text, mark: false }];
  while (i < text.length) {
    const hit = hl.find((h) => lower.startsWith(h, i));
    if (hit) {
      if (plain < i) runs.push({ text: text.slice(plain, i), mark: false });
      runs.push({ text: text.slice(i, i + hit.length), mark: true });
      i += hit.length;
      plain = i;
    } else i++;
  }
  if (plain < text.length) runs.push({ text: text.slice(plain), mark: false });
  return runs;
}

/** TermAt is the term the cursor is in: where it starts and what has been typed of it. */
export interface TermAt {
  start: number;
  end: number;
  text: string;
}

/** termAt finds the term around a cursor position, for completion. */
export function termAt(q: string, cursor: number): TermAt {
  let start = 0;
  let inQuote = false;
  for (let i = 0; i < cursor; i++) {
    if (q[i] === '"') inQuote = !inQuote;
    if (q[i] === " " && !inQuote) start = i + 1;
  }
  let end = cursor;
  while (end < q.length && (inQuote || q[end] !== " ")) {
    if (q[end] === '"') inQuote = !inQuote;
    end++;
  }
  return { start, end, text: q.slice(start, cursor) };
}

// nest: keys holding dots are stored as nested objects (contract §11), so that the query language's dotted paths
// find them: {"http.status_code": 200} becomes {"http": {"status_code": 200}}.

/**
 * nestDotted returns `flat` with each dotted key spread into nested objects, the keys without dots placed first so
 * that none is overwritten. A key that would nest into an existing non-object value (or one with an empty segment,
 * like "a..b") is kept whole. Objects inside are nested too (the decoders bound their depth); arrays are left as they are.
 */
export function nestDotted(flat: Record<string, unknown>): Record<string, unknown> {
  let dotted = false;
  for (const k in flat) {
    const v = flat[k];
    if (typeof v === "object" && v !== null && !Array.isArray(v)) define(flat, k, nestDotted(v as Record<string, unknown>));
    if (k.includes(".")) dotted = true;
  }
  if (!dotted) return flat;
  const out: Record<string, unknown> = {};
  for (const k in flat) if (!k.includes(".")) define(out, k, flat[k]);
  for (const k in flat) if (k.includes(".")) setPath(out, k, flat[k]);
  return out;
}

/** setPath puts value at the dotted path of key in out, or under key itself when the path is blocked. */
export function setPath(out: Record<string, unknown>, key: string, value: unknown): void {
  const parts = key.includes(".") ? key.split(".") : undefined;
  if (!parts || parts.some((p) => p === "")) return define(out, key, value);
  let at = out;
  for (let i = 0; i < parts.length - 1; i++) {
    const next = Object.hasOwn(at, parts[i]) ? at[parts[i]] : undefined;
    if (next === undefined) {
      const made: Record<string, unknown> = {};
      define(at, parts[i], made);
      at = made;
    } else if (typeof next === "object" && next !== null && !Array.isArray(next)) at = next as Record<string, unknown>;
    else return define(out, key, value);
  }
  const last = parts[parts.length - 1];
  const existing = Object.hasOwn(at, last) ? at[last] : undefined;
  // a value set whole (from an object) and one set by a dotted path merge when both are objects
  if (typeof existing === "object" && existing !== null && !Array.isArray(existing) && typeof value === "object" && value !== null && !Array.isArray(value)) {
    for (const k in value as Record<string, unknown>) setPath(existing as Record<string, unknown>, k, (value as Record<string, unknown>)[k]);
    return;
  }
  define(at, last, value);
}

/** define sets an own property, "__proto__" included, without touching the prototype. */
export function define(o: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
  else o[key] = value;
}

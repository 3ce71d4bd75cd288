// keys: how a user's string stands in an LMDB key.
//
// lmdb-js keys are ordered-binary arrays. A string element shorter than 64 UTF-16 units is written
// code unit by code unit, with the bytes 0–4 escaped, so it reads back exactly whatever it holds.
// A longer one is written as raw UTF-8: a U+0000–U+0004 inside it ends or escapes the element, and
// what follows can even decode as a number, so such a key reads back as something else. A string of
// 64 units or more therefore stands in a key as its SHA-256 instead, which is printable ASCII and at
// least 64 units long, so it can never equal a string kept as itself.

/** Strings shorter than this many UTF-16 units stand in keys as themselves. */
export const KEPT_MAX = 63;

/** textKey is how a user's string (a tag, an action, a name) stands in a key: itself when short, else its hash. */
export function textKey(text: string): string {
  if (text.length <= KEPT_MAX) return text;
  const units = new Uint16Array(text.length); // its UTF-16 units, not UTF-8, which would merge lone surrogates into U+FFFD
  for (let i = 0; i < text.length; i++) units[i] = text.charCodeAt(i);
  return `sha256:${new Bun.CryptoHasher("sha256").update(units).digest("hex")}`;
}

// keys: the API key format sl_{environment}_{type}_{random}, generation from a CSPRNG, and hashing.
import { ENVIRONMENTS, KEY_TYPES, type Environment, type KeyType } from "../schema.ts";

export const SCOPES = ["logs:read", "logs:write", "rw", "*"] as const;
export type Scope = (typeof SCOPES)[number];
export type Permission = "logs:read" | "logs:write";

export const DEFAULT_SCOPES: Record<KeyType, Scope[]> = {
  ro: ["logs:read"],
  wo: ["logs:write"],
  rw: ["logs:read", "logs:write"],
};

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const RANDOM_LENGTH = 40;
const KEY_FORMAT = new RegExp(`^sl_(${ENVIRONMENTS.join("|")})_(${KEY_TYPES.join("|")})_[A-Za-z0-9]{32,128}$`);

/** generateSecret makes a new API key secret; 40 characters of [A-Za-z0-9] is about 238 bits. */
export function generateSecret(env: Environment, type: KeyType): string {
  return `sl_${env}_${type}_${randomText(RANDOM_LENGTH)}`;
}

/** randomText draws characters of [A-Za-z0-9] from the CSPRNG. */
export function randomText(length: number): string {
  let text = "";
  while (text.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(64))) {
      if (byte < 248 && text.length < length) text += ALPHABET[byte % 62]; // 248 = 4·62: no modulo bias
    }
  }
  return text;
}

/** looksLikeKey tells whether text has the key format, so malformed keys never reach storage. */
export const looksLikeKey = (text: string): boolean => KEY_FORMAT.test(text);

/** hashSecret is what storage keeps instead of a secret (or of the admin token). */
export const hashSecret = (secret: string): string => Bun.SHA256.hash(secret, "hex") as string;

/** hintOf shows enough of a secret to recognise it: the first 12 characters, "…", the last 4. */
export const hintOf = (secret: string): string => `${secret.slice(0, 12)}…${secret.slice(-4)}`;

/** grants tells whether a key's scopes include a permission. */
export function grants(scopes: readonly string[], p: Permission): boolean {
  return scopes.includes("*") || scopes.includes("rw") || scopes.includes(p);
}

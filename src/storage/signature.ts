// signature: a digest of which blocks a range of server time holds, so that counts kept while the server was down can
// be checked against the blocks now stored. A block's key never changes its entries (a merge turns its value into a
// pointer into a part, the entries staying), so the keys alone tell whether a range's entries changed.
import type { Database } from "lmdb";
import type { Tenant } from "./keys.ts";

/** blockSignature is how many blocks [fromMs, toMs) holds and a hash of their keys, read from the keys alone. */
export function blockSignature(db: Database, tenant: Tenant, fromMs: number, toMs: number): string {
  const { ws, env } = tenant;
  let n = 0;
  let xor = 0n;
  let sum = 0n;
  for (const key of db.getKeys({ start: [ws, env, Math.max(0, fromMs)], end: [ws, env, Math.min(toMs, 8.64e15)], snapshot: false })) {
    const k = key as unknown[];
    const h = BigInt(Bun.hash.wyhash(`${k[2]}\u0000${k[3]}`));
    n++;
    xor ^= h;
    sum = (sum + h) & 0xffff_ffff_ffff_ffffn;
  }
  return `${n}:${xor.toString(36)}:${sum.toString(36)}`;
}

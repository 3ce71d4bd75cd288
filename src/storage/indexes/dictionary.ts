// dictionary: the distinct action values of each workspace environment, and their trigrams.
//
// Key layout (db `dictionary`): [workspaceId, environment, "v", textKey(action)] → action
// and [workspaceId, environment, "g", trigram, textKey(action)] → true, trigrams of the lowercased action.
// textKey (keys.ts) hashes a long action, which the key encoding could misread; the value keeps it whole.
// A substring query narrows the distinct values by trigrams, checks each value exactly, then
// reads the postings of the values that match. Distinct actions are far fewer than entries.
import type { Database, Key } from "lmdb";
import type { Environment } from "../../schema.ts";
import { textKey } from "../keys.ts";

/** trigrams lists the distinct 3-code-unit substrings of a (lowercased) text. */
export function trigrams(text: string): string[] {
  const out = new Set<string>();
  for (let i = 0; i + 3 <= text.length; i++) out.add(text.slice(i, i + 3));
  return [...out];
}

/** Fragments whose matching actions a tenant keeps at most: a few queries' worth. */
const KEPT_FRAGMENTS = 64;
/** Actions known to be committed, kept at most, across tenants: past it they are forgotten and read again. */
const KNOWN_ACTIONS = 100_000;

/** Kept is a tenant's actions found by fragment, forgotten when a new action is put. */
interface Kept {
  /** new actions put but not yet committed: nothing found meanwhile is kept, as it may lack them */
  pending: number;
  byFragment: Map<string, string[]>;
}

export class Dictionary {
  private readonly kept = new Map<string, Kept>();
  /** actions committed, by tenant: a block's distinct actions are looked up without a read (dictionary keys are never removed) */
  private readonly known = new Map<string, Set<string>>();
  private knownCount = 0;

  constructor(readonly db: Database) {}

  /**
   * add queues the puts that record a block's distinct action values, but those committed already, onto `puts`;
   * queue them with the block's. A value still in flight may be put twice: the same keys and values, so harmless.
   */
  add(ws: string, env: Environment, actions: Iterable<string>, puts: Promise<unknown>[]): void {
    const tenant = `${ws}\u0000${env}`;
    const known = this.known.get(tenant);
    for (const action of actions) {
      if (known?.has(action)) continue;
      const records = this.records(ws, env, action);
      if (records.length === 0) {
        this.know(tenant, action);
        continue;
      }
      const kept = this.keptOf(ws, env);
      kept.pending++;
      kept.byFragment.clear();
      const mine = records.map(([key, value]) => this.db.put(key, value));
      puts.push(...mine);
      void Promise.allSettled(mine).then((settled) => {
        kept.pending--;
        if (settled.every((s) => s.status === "fulfilled")) this.know(tenant, action);
      });
    }
  }

  /** know notes an action as committed for a tenant. */
  private know(tenant: string, action: string): void {
    if (this.knownCount >= KNOWN_ACTIONS) {
      this.known.clear();
      this.knownCount = 0;
    }
    let set = this.known.get(tenant);
    if (!set) this.known.set(tenant, (set = new Set()));
    if (!set.has(action)) this.knownCount++;
    set.add(action);
  }

  /** addSync records an action value inside a synchronous transaction (a rebuild, layout.ts). */
  addSync(ws: string, env: Environment, action: string): void {
    this.kept.delete(`${ws}\u0000${env}`);
    for (const [key, value] of this.records(ws, env, action)) this.db.putSync(key, value);
  }

  /** records lists the keys and values that record a new action value: none when it is recorded already. */
  private records(ws: string, env: Environment, action: string): [Key, unknown][] {
    const key = textKey(action);
    if (this.db.get([ws, env, "v", key]) !== undefined) return [];
    return [[[ws, env, "v", key], action], ...trigrams(action.toLowerCase()).map((t): [Key, unknown] => [[ws, env, "g", t, key], true])];
  }

  /**
   * actions returns the distinct action values that satisfy `test`, narrowed first by the trigrams
   * of `literal` (a lowercased fragment every match must contain; "" when there is none).
   */
  actions(ws: string, env: Environment, literal: string, test: (action: string) => boolean): string[] {
    const kept = this.keptOf(ws, env);
    let found = kept.byFragment.get(literal);
    if (!found) {
      found = this.containing(ws, env, literal);
      if (kept.pending === 0) {
        if (kept.byFragment.size >= KEPT_FRAGMENTS) kept.byFragment.clear();
        kept.byFragment.set(literal, found);
      }
    }
    return found.filter(test);
  }

  /** containing lists the distinct action values whose lowercased text may contain `literal`, by its trigrams. */
  private containing(ws: string, env: Environment, literal: string): string[] {
    const grams = trigrams(literal);
    let candidates: Iterable<string>; // term keys
    if (grams.length === 0) {
      candidates = this.db.getKeys({ start: [ws, env, "v"], end: [ws, env, "v\u0000"], snapshot: false }).map((k) => (k as unknown[])[3] as string);
    } else {
      let set: Set<string> | undefined;
      for (const g of grams) {
        const next = new Set<string>();
        for (const k of this.db.getKeys({ start: [ws, env, "g", g], end: [ws, env, "g", `${g}\u0000`], snapshot: false })) {
          const action = (k as unknown[])[4] as string;
          if (!set || set.has(action)) next.add(action);
        }
        set = next;
        if (set.size === 0) break;
      }
      candidates = set ?? [];
    }
    const out: string[] = [];
    for (const key of candidates) {
      const action = this.db.get([ws, env, "v", key]) as string | undefined;
      if (action !== undefined) out.push(action);
    }
    return out;
  }

  private keptOf(ws: string, env: Environment): Kept {
    const id = `${ws}\u0000${env}`;
    let kept = this.kept.get(id);
    if (!kept) this.kept.set(id, (kept = { pending: 0, byFragment: new Map() }));
    return kept;
  }
}

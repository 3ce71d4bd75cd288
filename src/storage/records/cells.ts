// cells: what a clean stop leaves for the next start to reuse, as one opaque record (db `cells`, key "saved"). Storage
// does not read it: the alert evaluator's counts encode it and check it against the blocks before trusting it.
import type { Database } from "lmdb";

const KEY = "saved";

/** SavedCells keeps at most one record of counts saved at a clean stop. */
export class SavedCells {
  constructor(private readonly db: Database) {}

  /** save stores `bytes` in place of any record saved before; it resolves once committed. */
  async save(bytes: Uint8Array): Promise<void> {
    await this.db.put(KEY, bytes);
  }

  /** take reads the saved record and removes it in one synchronous transaction, so no later start reads it again. */
  take(): Uint8Array | undefined {
    return this.db.transactionSync(() => {
      const bytes = this.db.get(KEY) as Uint8Array | undefined;
      if (bytes) this.db.removeSync(KEY);
      return bytes;
    });
  }
}

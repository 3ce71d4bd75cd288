// patch-lmdb (npm postinstall): closes a heap overflow in the addon lmdb-js ships. When LMDB fails to write a page
// (a full disk), mdb_page_flush formats "Attempting to write page at position %u, size %u, blocks %u, buffer sizes
// %i %i %i" into a buffer of 100 bytes; long numbers overrun it, the heap is corrupt and the process aborts later.
// Ending the format after the size keeps the message within the buffer. Run again, it finds nothing left to patch.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const FORMAT = "Attempting to write page at position %u, size %u, blocks %u, buffer sizes %i %i %i";
const KEPT = "Attempting to write page at position %u, size %u";
const PATCHED = Buffer.concat([Buffer.from(KEPT), Buffer.alloc(FORMAT.length - KEPT.length)]);

/** addonFiles lists the .node files under dir, a few levels down. */
function addonFiles(dir, depth = 3) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return depth > 0 ? addonFiles(path, depth - 1) : [];
    return e.name.endsWith(".node") ? [path] : [];
  });
}

const modules = join(dirname(fileURLToPath(import.meta.url)), "..", "node_modules");
let patched = 0;
let found = 0;
for (const file of [...addonFiles(join(modules, "@lmdb")), ...addonFiles(join(modules, "lmdb"))]) {
  const bytes = readFileSync(file);
  const at = bytes.indexOf(FORMAT);
  if (at >= 0) {
    PATCHED.copy(bytes, at);
    writeFileSync(file, bytes);
    patched++;
  }
  if (bytes.indexOf(PATCHED) >= 0) found++;
}
if (found === 0) console.warn("patch-lmdb: no lmdb addon with the write-error message found; a full disk may crash this build");
else if (patched > 0) console.log(`patch-lmdb: bounded the write-error message in ${patched} lmdb addon file(s)`);

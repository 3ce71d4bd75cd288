// logfmt: `key=value key2="quoted value" flag` lines split into pairs, as Loki's logfmt parser reads them.

/** parseLogfmt reads a logfmt line into [key, value] pairs; null when it holds something else. */
export function parseLogfmt(line: string): [string, string][] | null {
  const out: [string, string][] = [];
  let i = 0;
  const n = line.length;
  while (i < n) {
    while (i < n && line[i] === " ") i++;
    if (i >= n) break;
    const start = i;
    while (i < n && line[i] !== "=" && line[i] !== " " && line[i] !== '"') i++;
    const key = line.slice(start, i);
    if (key === "") return null;
    if (line[i] !== "=") {
      if (line[i] === '"') return null;
      out.push([key, ""]); // a bare key is a flag
      continue;
    }
    i++;
    if (line[i] === '"') {
      let value = "";
      i++;
      while (i < n && line[i] !== '"') {
        if (line[i] === "\\" && i + 1 < n) i++;
        value += line[i++];
      }
      if (i >= n) return null;
      i++;
      out.push([key, value]);
    } else {
      const vs = i;
      while (i < n && line[i] !== " ") i++;
      out.push([key, line.slice(vs, i)]);
    }
  }
  return out;
}

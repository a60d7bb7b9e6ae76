// Unified diff of an approval's write (old → new), as rows ready to render. Pure, so
// the hunk/line-number logic is unit-tested.

import { structuredPatch } from "diff";

export type DiffRow =
  | { kind: "hunk"; text: string }
  | { kind: "add" | "del" | "ctx"; text: string; oldNo: number | null; newNo: number | null }
  | { kind: "note"; text: string };

export interface DiffResult {
  rows: DiffRow[];
  added: number;
  removed: number;
}

export function unifiedDiff(oldText: string, newText: string, context = 3): DiffResult {
  const patch = structuredPatch("a", "b", oldText, newText, undefined, undefined, { context });
  const rows: DiffRow[] = [];
  let added = 0;
  let removed = 0;
  for (const h of patch.hunks) {
    rows.push({ kind: "hunk", text: `@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@` });
    let o = h.oldStart;
    let n = h.newStart;
    for (const line of h.lines) {
      const mark = line[0];
      const text = line.slice(1);
      if (mark === "+") {
        rows.push({ kind: "add", text, oldNo: null, newNo: n++ });
        added++;
      } else if (mark === "-") {
        rows.push({ kind: "del", text, oldNo: o++, newNo: null });
        removed++;
      } else if (mark === "\\") {
        rows.push({ kind: "note", text: line });
      } else {
        rows.push({ kind: "ctx", text, oldNo: o++, newNo: n++ });
      }
    }
  }
  return { rows, added, removed };
}

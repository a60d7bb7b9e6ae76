// The command palette's filter: a subsequence match scored so that matches at word
// starts and consecutive runs rank first (typing "nc" finds "New chat").

export interface Scored<T> {
  item: T;
  score: number;
  /** Indices of matched characters in the label, for highlighting. */
  positions: number[];
}

export function fuzzyScore(query: string, label: string): { score: number; positions: number[] } | null {
  const q = query.trim().toLowerCase();
  if (q === "") return { score: 0, positions: [] };
  const l = label.toLowerCase();
  const positions: number[] = [];
  let score = 0;
  let li = 0;
  let prev = -2;
  for (const ch of q) {
    if (ch === " ") continue;
    const found = l.indexOf(ch, li);
    if (found < 0) return null;
    const atWordStart = found === 0 || /[\s\-_/.:]/.test(l[found - 1]!);
    score += 1;
    if (found === prev + 1) score += 3;
    if (atWordStart) score += 4;
    if (found === 0) score += 2;
    score -= Math.min(found - li, 5) * 0.1;
    positions.push(found);
    prev = found;
    li = found + 1;
  }
  // A plain substring is what people most often mean.
  if (l.includes(q)) score += 5;
  // Shorter labels first among equals.
  score -= label.length * 0.01;
  return { score, positions };
}

export function fuzzyFilter<T>(query: string, items: T[], label: (t: T) => string): Scored<T>[] {
  const out: Scored<T>[] = [];
  items.forEach((item) => {
    const m = fuzzyScore(query, label(item));
    if (m) out.push({ item, score: m.score, positions: m.positions });
  });
  if (query.trim() === "") return out;
  return out.sort((a, b) => b.score - a.score);
}

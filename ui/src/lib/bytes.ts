// Sizes and download progress as people read them: decimal units (a "98 MB" model is
// 98,362,432 bytes), one decimal from kB up, and whole percents that reach 100 only when
// every byte is in.

const UNITS = ["kB", "MB", "GB", "TB"];

export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return "—";
  if (bytes < 1000) return `${Math.round(bytes)} B`;
  let v = bytes / 1000;
  let i = 0;
  // 999.95 would print as "1000.0": the next unit up reads better.
  while (v >= 999.95 && i < UNITS.length - 1) {
    v /= 1000;
    i++;
  }
  return `${v.toFixed(1)} ${UNITS[i]}`;
}

/** Whole percent of `done` in `total`, 0–100; 0 when the total is unknown. */
export function percent(done: number, total: number): number {
  if (!Number.isFinite(done) || !Number.isFinite(total) || total <= 0 || done <= 0) return 0;
  if (done >= total) return 100;
  return Math.min(99, Math.floor((done * 100) / total));
}

/** "12.3 MB of 98.4 MB (12%)". */
export function progressText(done: number, total: number): string {
  if (!Number.isFinite(total) || total <= 0) return formatBytes(done);
  return `${formatBytes(Math.min(Math.max(done, 0), total))} of ${formatBytes(total)} (${percent(done, total)}%)`;
}

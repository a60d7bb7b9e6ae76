// Text from a model or a tool as a person must see it before approving it: every
// character that could hide text or reorder it written out as a visible escape. The same
// rule as `skald_api::visible` in Rust (keep the two lists alike).
//
// Escaped: the C0 controls except newline and tab (`\r`, `\x1b`, …), DEL, the C1
// controls, the bidirectional controls (`\u{202e}`, `\u{2066}`–`\u{2069}`, …), zero-width
// and other invisible format characters, the line and paragraph separators and lone
// surrogates. Everything else, backslashes included, is left as it is.

import type { JsonValue } from "../protocol";

export function isHiddenControl(cp: number): boolean {
  return (
    (cp <= 0x08) ||
    (cp >= 0x0b && cp <= 0x1f) ||
    (cp >= 0x7f && cp <= 0x9f) ||
    cp === 0xad ||
    cp === 0x34f ||
    cp === 0x61c ||
    cp === 0x115f ||
    cp === 0x1160 ||
    cp === 0x17b4 ||
    cp === 0x17b5 ||
    (cp >= 0x180b && cp <= 0x180f) ||
    (cp >= 0x200b && cp <= 0x200f) ||
    (cp >= 0x2028 && cp <= 0x202e) ||
    (cp >= 0x2060 && cp <= 0x206f) ||
    cp === 0x3164 ||
    (cp >= 0xd800 && cp <= 0xdfff) ||
    cp === 0xfeff ||
    cp === 0xffa0 ||
    (cp >= 0xfff9 && cp <= 0xfffb) ||
    (cp >= 0x1d173 && cp <= 0x1d17a) ||
    (cp >= 0xe0000 && cp <= 0xe007f)
  );
}

/** A piece of shown text: as it is, or an escape standing for one hidden character. */
export interface Segment {
  text: string;
  escape: boolean;
}

function escapeOf(cp: number, inline: boolean): string | null {
  if (cp === 0x0a) return inline ? "\\n" : null;
  if (cp === 0x09) return inline ? "\\t" : null;
  if (cp === 0x0d) return "\\r";
  if (!isHiddenControl(cp)) return null;
  return cp < 0x80 ? `\\x${cp.toString(16).padStart(2, "0")}` : `\\u{${cp.toString(16)}}`;
}

/** `s` cut into plain runs and escapes, for rendering escapes so they stand out. */
export function segments(s: string, inline = false): Segment[] {
  const out: Segment[] = [];
  let run = "";
  for (const ch of s) {
    const esc = escapeOf(ch.codePointAt(0)!, inline);
    if (esc == null) {
      run += ch;
    } else {
      if (run) out.push({ text: run, escape: false });
      run = "";
      out.push({ text: esc, escape: true });
    }
  }
  if (run) out.push({ text: run, escape: false });
  return out;
}

/** `s` with every hidden control escaped; newlines and tabs kept. */
export function escapeControls(s: string): string {
  return segments(s).map((p) => p.text).join("");
}

/** `s` on one line (newlines and tabs escaped too), for titles and labels. */
export function escapeControlsInline(s: string): string {
  return segments(s, true).map((p) => p.text).join("");
}

/** One argument of a call as it is shown for approval: its whole value as text. */
export interface ArgumentField {
  key: string | null;
  text: string;
}

/**
 * A call's arguments, whole: strings as themselves (so a multi-line command keeps its
 * lines), anything else as indented JSON. Escaping happens when the text is rendered.
 */
export function argumentFields(args: JsonValue | undefined): ArgumentField[] {
  if (args === undefined || args === null) return [];
  const text = (v: JsonValue) => (typeof v === "string" ? v : JSON.stringify(v, null, 2) ?? String(v));
  if (typeof args === "object" && !Array.isArray(args)) {
    return Object.entries(args).map(([key, v]) => ({ key, text: v === undefined ? "" : text(v) }));
  }
  return [{ key: null, text: text(args) }];
}

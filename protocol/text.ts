/**
 * Text from a repository, a forge or a model, made safe to show on one line. Pure.
 *
 * A path or a ref may hold line breaks, control characters, and the invisible format characters
 * that reorder or hide what a reader sees (U+202E turns `gpj.exe` into what reads as `exe.jpg`).
 * `escapeControls` writes each of them as a visible escape, in JSON's spelling where JSON has one
 * (`\n`, `\t`) and `\u202E` otherwise, and the backslash itself as `\\` only when the text needs
 * escaping at all, so an ordinary path reads unchanged and an escaped one reads back exactly.
 */

/**
 * C0 and C1 controls, DEL, and the format characters that change how text reads without showing
 * themselves: zero-width and joiner characters, bidirectional marks, embeddings, overrides and
 * isolates, line and paragraph separators, the word joiner and invisible operators, the BOM, and
 * interlinear annotation marks.
 */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u115f\u1160\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufeff\ufff9-\ufffb]/;
const UNSAFE_ALL = new RegExp(UNSAFE.source, 'g');

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f' };

/** Whether `text` holds a character `escapeControls` would rewrite. */
export function hasControls(text: string): boolean {
  return UNSAFE.test(text);
}

/**
 * `text` with every control and invisible format character written as a visible escape. Text with
 * none comes back unchanged (backslashes included); otherwise backslashes are doubled too, so the
 * escaped form is unambiguous.
 */
export function escapeControls(text: string): string {
  if (!UNSAFE.test(text)) return text;
  return text.replace(/\\/g, '\\\\').replace(UNSAFE_ALL, (c) => NAMED[c] ?? `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`);
}

/** The same set, but tabs and line breaks kept: for text laid out on lines (code, prose paragraphs). */
const INVISIBLE = new RegExp(UNSAFE.source.replace('\\u0000-\\u001f', '\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f'));
const INVISIBLE_ALL = new RegExp(INVISIBLE.source, 'g');

/**
 * `text` with every invisible or reordering character written as a visible escape, but tabs and
 * line breaks kept: code lines and prose keep their layout, while a bidi override (the "Trojan
 * Source" trick) or a zero-width character shows where it is instead of rearranging what follows.
 */
export function escapeInvisible(text: string): string {
  if (!INVISIBLE.test(text)) return text;
  return text.replace(/\\/g, '\\\\').replace(INVISIBLE_ALL, (c) => NAMED[c] ?? `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`);
}

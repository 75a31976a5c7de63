import type { DiffLine, FileChange, Hunk } from '../../protocol/patchset';
import { err, ok, type Result } from '../../protocol/result';
import { EVIDENCE_KIND_ORDER, EVIDENCE_MANIFEST_MAX_BYTES, EVIDENCE_MANIFEST_MAX_ENTRIES, type EvidenceUnit } from '../../protocol/rounds';
import { canonicalJson, contentId } from '../capture/ids';

/**
 * PURE. The evidence manifest: a round's measured diff cut into units the classification seat
 * cites by id (protocol/rounds.ts `EvidenceUnit`). No I/O; inputs are never mutated; the same
 * files always give the same manifest, byte for byte.
 *
 * Units per file, lossless (a file that moved and changed gives its rename AND its hunks):
 * - `rename`: a renamed file (its path and previous path);
 * - `mode-change`: `modeChanged` with both modes present (old and new mode);
 * - `binary`: a binary file, or a submodule (its change status) — nothing in either has a line;
 * - `text-hunk`: each captured hunk of any other file.
 */

export type EvidenceKind = EvidenceUnit['kind'];
export type TextHunkUnit = Extract<EvidenceUnit, { kind: 'text-hunk' }>;

export interface EvidenceManifestFailure {
  reason: 'duplicate-id' | 'too-large';
  message: string;
  detail?: Record<string, string>;
}

/**
 * THE path order of rounds (manifest, verifier, report): UTF-16 code units, as `<` compares
 * strings. Never localeCompare: a locale would make the order, and so the manifest, machine-dependent.
 */
export function comparePaths(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** What git prints after a line whose file does not end in a newline. */
export const NO_NEWLINE_MARKER = '\\ No newline at end of file';

const MARKER: Record<DiffLine['kind'], string> = { add: '+', del: '-', context: ' ' };

/**
 * A hunk's body as git printed it: marker + text per line, joined by `\n`, with git's
 * no-newline line after a line flagged `noNewlineAtEof`. It is rebuilt from the parsed lines
 * rather than kept from git's output, so the same lines always give the same body (a CR stays in
 * its line's text). The no-newline line is kept because gaining or losing a final newline is a
 * change the worker made, and the unit must show it.
 */
export function hunkBody(hunk: Pick<Hunk, 'lines'>): string {
  const out: string[] = [];
  for (const line of hunk.lines) {
    out.push(MARKER[line.kind] + line.text);
    if (line.noNewlineAtEof) out.push(NO_NEWLINE_MARKER);
  }
  return out.join('\n');
}

/**
 * `ev-` + 16 hex of SHA-256 over (kind, path, identity), NUL-separated (contentId): identity is
 * the header and body of a text hunk, the mode pair, the previous path, or the change status.
 * A text hunk's header carries its line numbers, so a change above it in the same file re-keys it
 * while a change in another file never does.
 */
export function evidenceId(kind: EvidenceKind, path: string, identity: readonly string[]): string {
  return contentId('ev', [kind, path, ...identity]);
}

/**
 * A text hunk's anchor: its first added line (head side), else its first deleted line (base
 * side). Null for a hunk that changes no line (context only), which git never prints.
 */
export function hunkAnchor(hunk: Pick<Hunk, 'lines'>): TextHunkUnit['anchor'] | null {
  for (const line of hunk.lines) if (line.kind === 'add' && line.newLine !== null) return { side: 'head', line: line.newLine };
  for (const line of hunk.lines) if (line.kind === 'del' && line.oldLine !== null) return { side: 'base', line: line.oldLine };
  return null;
}

/** The units of one file, in its own order (kind, then hunk order). */
export function fileEvidence(file: FileChange): EvidenceUnit[] {
  const units: EvidenceUnit[] = [];
  const { path } = file;
  if (file.status === 'renamed' && file.oldPath !== null) {
    units.push({ kind: 'rename', id: evidenceId('rename', path, [file.oldPath]), path, previousPath: file.oldPath });
  }
  if (file.modeChanged && file.oldMode !== null && file.newMode !== null) {
    const { oldMode, newMode } = file;
    units.push({ kind: 'mode-change', id: evidenceId('mode-change', path, [oldMode, newMode]), path, oldMode, newMode });
  }
  // A submodule is treated like a binary file (its status, no lines). Rounds refuse repositories
  // with submodules before they start, so this is defensive: it keeps the manifest lossless.
  if (file.binary || file.submodule) {
    units.push({ kind: 'binary', id: evidenceId('binary', path, [file.status]), path, status: file.status });
    return units;
  }
  // A truncated file contributes the hunks that were captured; its uncaptured tail (and the whole
  // of a file truncated by size, which has no hunks) has no unit.
  for (const hunk of file.hunks) {
    const anchor = hunkAnchor(hunk);
    // A context-only hunk changes nothing, so there is nothing to account for: it gets no unit.
    if (anchor === null) continue;
    const body = hunkBody(hunk);
    units.push({ kind: 'text-hunk', id: evidenceId('text-hunk', path, [hunk.header, body]), path, header: hunk.header, body, anchor });
  }
  return units;
}

/**
 * The manifest of a measured diff: every unit of every file, ordered by path (comparePaths),
 * then kind (EVIDENCE_KIND_ORDER), then position (the files' order, then hunk order). A repeated
 * id is a failure, never merged; so is a manifest over its limits (nothing is truncated to fit).
 */
export function evidenceManifest(files: readonly FileChange[]): Result<EvidenceUnit[], EvidenceManifestFailure> {
  const placed: Array<{ unit: EvidenceUnit; position: number }> = [];
  for (const file of files) for (const unit of fileEvidence(file)) placed.push({ unit, position: placed.length });
  placed.sort((a, b) => comparePaths(a.unit.path, b.unit.path) || EVIDENCE_KIND_ORDER.indexOf(a.unit.kind) - EVIDENCE_KIND_ORDER.indexOf(b.unit.kind) || a.position - b.position);
  const units = placed.map((p) => p.unit);
  const seen = new Map<string, EvidenceUnit>();
  for (const unit of units) {
    const first = seen.get(unit.id);
    if (first) {
      return err({
        reason: 'duplicate-id',
        message: `Evidence id ${unit.id} names two units (${first.kind} of ${first.path} and ${unit.kind} of ${unit.path}); the manifest cannot tell them apart.`,
        detail: { evidenceId: unit.id, path: unit.path },
      });
    }
    seen.set(unit.id, unit);
  }
  const limits = checkManifestLimits(units);
  return limits.ok ? ok(units) : limits;
}

/**
 * THE manifest serializer: compact JSON with object keys sorted (canonicalJson), so a manifest
 * serializes to the same bytes however its units were built or read back. evidence.json and the
 * size limit both use it.
 */
export function serializeManifest(units: readonly EvidenceUnit[]): string {
  return canonicalJson(units);
}

/** The manifest's size as the classifier receives it: UTF-8 bytes of `serializeManifest`. */
export function manifestBytes(units: readonly EvidenceUnit[]): number {
  return Buffer.byteLength(serializeManifest(units), 'utf8');
}

/** Over EVIDENCE_MANIFEST_MAX_ENTRIES units or EVIDENCE_MANIFEST_MAX_BYTES bytes: 'too-large', no model call. */
export function checkManifestLimits(units: readonly EvidenceUnit[]): Result<void, EvidenceManifestFailure> {
  if (units.length > EVIDENCE_MANIFEST_MAX_ENTRIES) {
    return err({
      reason: 'too-large',
      message: `The round's diff has ${units.length} evidence units; the classifier takes at most ${EVIDENCE_MANIFEST_MAX_ENTRIES}.`,
      detail: { entries: String(units.length), limit: String(EVIDENCE_MANIFEST_MAX_ENTRIES) },
    });
  }
  const bytes = manifestBytes(units);
  if (bytes > EVIDENCE_MANIFEST_MAX_BYTES) {
    return err({
      reason: 'too-large',
      message: `The round's evidence manifest is ${bytes} bytes; the classifier takes at most ${EVIDENCE_MANIFEST_MAX_BYTES}.`,
      detail: { bytes: String(bytes), limit: String(EVIDENCE_MANIFEST_MAX_BYTES) },
    });
  }
  return ok(undefined);
}

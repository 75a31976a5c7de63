/**
 * PURE. A round's own diff as VS Code opens it: which read-only `rennet-round:` documents stand
 * for each side of each file its commits changed (range.from → range.to), the multi-file diff's
 * tuples and title, and where one piece of evidence opens. No `vscode` import: roundDiff.ts turns
 * the addresses into URIs and runs the commands; unit tests run in plain Node.
 *
 * These documents are not the review's: their line numbers are the round's own, so the comment
 * controller offers no commenting range on them and the citation marks draw nothing there
 * (documentRefs.ts `isReviewDocumentScheme`).
 */
import type { Side } from '../protocol/patchset';
import type { Round, RoundDiffFile, RoundDiffFiles } from '../protocol/rounds';
import type { RoundDiffFocus } from '../protocol/webview';
import { checkRepoRelativePath } from './paths';
import { ui, type UiText } from './uiText';

/** `rennet-round:/<path>?session=…&round=…&side=base|head|absent` — one side of one file of a round's diff, read-only. */
export const ROUND_SCHEME = 'rennet-round';

/** One side of one file of a round's diff; `absent` is the empty side of an added or deleted file. */
export interface RoundAddress {
  sessionId: string;
  roundId: string;
  /** Repo-relative, as the side names it (a rename's base is its old path). */
  path: string;
  side: Side | 'absent';
}

/** The parts of a `rennet-round:` URI (`vscode.Uri.from` takes them). */
export function roundUriParts(address: RoundAddress): { scheme: string; path: string; query: string } {
  const query = new URLSearchParams({ session: address.sessionId, round: address.roundId, side: address.side }).toString();
  return { scheme: ROUND_SCHEME, path: `/${address.path}`, query };
}

/** The address a `rennet-round:` URI names; null for any other URI, a malformed one, or an escaping path. */
export function parseRoundUri(uri: { scheme: string; path: string; query: string }): RoundAddress | null {
  if (uri.scheme !== ROUND_SCHEME) return null;
  const query = new URLSearchParams(uri.query);
  const sessionId = query.get('session');
  const roundId = query.get('round');
  const side = query.get('side');
  const path = uri.path.replace(/^\//, '');
  if (!sessionId || !roundId || !path || (side !== 'base' && side !== 'head' && side !== 'absent')) return null;
  if (!checkRepoRelativePath(path).ok) return null;
  return { sessionId, roundId, path, side };
}

/** One file of the multi-file diff: the resource it is listed under, and its two sides. */
export interface RoundDiffEntry {
  label: RoundAddress;
  original: RoundAddress;
  modified: RoundAddress;
}

export type RoundDiffPlan =
  /** The whole round, every file (`vscode.changes`). */
  | { kind: 'changes'; title: UiText; entries: RoundDiffEntry[] }
  /** One file's diff (`vscode.diff`), its after side selected at `line` when given. */
  | { kind: 'diff'; title: UiText; entry: RoundDiffEntry; line: number | null }
  /** A line on the before side: that document alone, the line selected. */
  | { kind: 'before'; address: RoundAddress; line: number }
  /** Nothing to open, and why. */
  | { kind: 'none'; message: UiText };

function shortRange(diff: Pick<RoundDiffFiles, 'from' | 'to'>): string {
  return `${diff.from.slice(0, 7)}..${diff.to.slice(0, 7)}`;
}

/** The two sides of one changed file (the empty stand-in for the side it does not have). */
export function roundDiffEntry(sessionId: string, roundId: string, file: RoundDiffFile): RoundDiffEntry {
  const at = (path: string, side: RoundAddress['side']): RoundAddress => ({ sessionId, roundId, path, side });
  const original = file.status === 'added' ? at(file.path, 'absent') : at(file.oldPath ?? file.path, 'base');
  const modified = file.status === 'deleted' ? at(file.path, 'absent') : at(file.path, 'head');
  return { label: file.status === 'deleted' ? original : modified, original, modified };
}

/** The file `path` names on `side` of the round's diff. */
function fileOn(files: readonly RoundDiffFile[], path: string, side: Side): RoundDiffFile | undefined {
  return files.find((f) => (side === 'base' ? f.status !== 'added' && (f.oldPath ?? f.path) === path : f.status !== 'deleted' && f.path === path));
}

/**
 * What opening the round's diff shows: every file it changed, or — with `at`, a report's evidence —
 * that file at that line (the after side in the file's diff; a before-side line in the before
 * document alone, where the line number means what the evidence says).
 */
export function planRoundDiff(sessionId: string, round: Pick<Round, 'id' | 'ordinal'>, diff: RoundDiffFiles, at?: RoundDiffFocus): RoundDiffPlan {
  const n = round.ordinal;
  if (diff.files.length === 0) return { kind: 'none', message: ui`Round ${n}'s commits (${shortRange(diff)}) change no file.` };
  if (!at) {
    return {
      kind: 'changes',
      title: ui`Round ${n} · ${shortRange(diff)} (read-only)`,
      entries: diff.files.map((file) => roundDiffEntry(sessionId, round.id, file)),
    };
  }
  // A unit without a line (a rename, a mode change, a binary) names its file: on either side.
  const file = fileOn(diff.files, at.path, at.side) ?? (at.line === null ? fileOn(diff.files, at.path, at.side === 'base' ? 'head' : 'base') : undefined);
  if (!file) return { kind: 'none', message: ui`${at.path} is not a file round ${n} changed on its ${at.side === 'base' ? 'before' : 'after'} side.` };
  const entry = roundDiffEntry(sessionId, round.id, file);
  if (at.side === 'base' && at.line !== null) return { kind: 'before', address: entry.original, line: at.line };
  return { kind: 'diff', title: ui`${file.path} · round ${n} · ${shortRange(diff)} (read-only)`, entry, line: at.side === 'head' ? at.line : null };
}

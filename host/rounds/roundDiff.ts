import { existsSync } from 'node:fs';
import type { FileStatus, Side } from '../../protocol/patchset';
import { err, ok, rennetError, type Result } from '../../protocol/result';
import { roundHasDiff, type Round, type RoundBlobParams, type RoundDiffFile, type RoundDiffFiles, type RoundRef } from '../../protocol/rounds';
import type { BlobContent } from '../../protocol/rpc';
import type { Session } from '../../protocol/session';
import { readBlobBounded } from '../capture/blob';
import { checkRepoRelativePath } from '../capture/paths';
import { runGit } from '../git/run';

/**
 * A round's own diff, read-only: what its worker's commits changed, range.from → range.to (HEAD
 * before and after its turn), in the round's bound workspace. Read from git when asked, never
 * stored: commit ids are immutable, so the answer is the same every time. The extension shows it
 * through read-only documents; nothing here writes.
 *
 * - `roundDiffFiles` (`rennet/rounds/diffFiles`): the changed files with their status, from
 *   `git diff --raw -z --find-renames` with flags fixed against user configuration.
 * - `readRoundBlob` (`rennet/rounds/readBlob`): one side of one of those files, by the blob id git
 *   named for it (what `git show <commit>:<path>` prints), bounded as every blob read is. A path the
 *   round did not change, or a side the file does not have, is refused: this is not a way to read
 *   any file of any commit.
 */

/** What the round diff needs of the host: the session's rounds and its repository. */
export interface RoundDiffDeps {
  rounds(sessionId: string): readonly Round[];
  getSession(sessionId: string): Pick<Session, 'id' | 'repoRoot'> | undefined;
}

/** A changed file as git's raw diff names it, with the blob ids of both sides (null: the side does not exist). */
export interface RawRoundFile extends RoundDiffFile {
  oldOid: string | null;
  newOid: string | null;
}

const COMMIT_ID = /^[0-9a-f]{40}([0-9a-f]{24})?$/;
const NULL_OID = /^0+$/;

/** The argv of the round's file list: renames found, no external diff, textconv or relative paths, full blob ids. */
export function roundDiffArgs(from: string, to: string): string[] {
  return ['diff', '--raw', '-z', '--find-renames', '--no-ext-diff', '--no-textconv', '--no-relative', '--ignore-submodules=none', '--no-abbrev', from, to, '--'];
}

/**
 * PURE. `git diff --raw -z` output: `:<mode> <mode> <oid> <oid> <status>\0<path>\0`, and for a
 * rename or copy `…\0<old>\0<new>\0`. A type change is a modification; a copy is an added file.
 */
export function parseRawDiff(stdout: Buffer | string): RawRoundFile[] {
  const fields = (typeof stdout === 'string' ? stdout : stdout.toString('utf8')).split('\0');
  const files: RawRoundFile[] = [];
  for (let i = 0; i < fields.length; i++) {
    const head = fields[i] ?? '';
    if (!head.startsWith(':')) continue;
    const [, , oldOid = '', newOid = '', statusField = ''] = head.slice(1).split(' ');
    const letter = statusField.charAt(0);
    const oldSide = NULL_OID.test(oldOid) ? null : oldOid;
    const newSide = NULL_OID.test(newOid) ? null : newOid;
    if (letter === 'R' || letter === 'C') {
      const oldPath = fields[++i] ?? '';
      const path = fields[++i] ?? '';
      files.push(letter === 'R' ? { path, oldPath, status: 'renamed', oldOid: oldSide, newOid: newSide } : { path, oldPath: null, status: 'added', oldOid: null, newOid: newSide });
      continue;
    }
    const path = fields[++i] ?? '';
    const status: FileStatus = letter === 'A' ? 'added' : letter === 'D' ? 'deleted' : 'modified';
    files.push({ path, oldPath: null, status, oldOid: status === 'added' ? null : oldSide, newOid: status === 'deleted' ? null : newSide });
  }
  return files.filter((f) => f.path.length > 0);
}

/** The round, where its commits are read, and its range; or why it has no diff of its own. */
function locate(deps: RoundDiffDeps, ref: RoundRef): Result<{ round: Round; root: string; from: string; to: string }> {
  const session = deps.getSession(ref.sessionId);
  if (!session) return err(rennetError('not-found', `no session ${ref.sessionId}`));
  const round = deps.rounds(ref.sessionId).find((r) => r.id === ref.roundId);
  if (!round) return err(rennetError('not-found', `no round ${ref.roundId} in this review`));
  if (!round.range || !roundHasDiff(round)) return err(rennetError('not-found', `round ${round.ordinal} committed nothing, so it has no diff of its own`));
  const { from, to } = round.range;
  if (!COMMIT_ID.test(from) || !COMMIT_ID.test(to)) return err(rennetError('invalid-request', `round ${round.ordinal}'s range is not two commit ids`));
  // The bound workspace holds the round's commits; a worktree removed since (an archived sibling) shares the repository's objects.
  const root = existsSync(round.workspace.root) ? round.workspace.root : session.repoRoot;
  return ok({ round, root, from, to });
}

async function rawFiles(root: string, from: string, to: string): Promise<Result<RawRoundFile[]>> {
  try {
    const result = await runGit(roundDiffArgs(from, to), { cwd: root });
    if (result.code !== 0) return err(rennetError('git-failed', `git could not diff ${from.slice(0, 7)}..${to.slice(0, 7)}: ${result.stderr.trim() || `exit ${result.code}`}`));
    return ok(parseRawDiff(result.stdout));
  } catch (error) {
    return err(rennetError('git-failed', `git could not run in ${root}: ${(error as Error).message}`));
  }
}

/** `rennet/rounds/diffFiles`: the files the round's commits changed, in git's order. */
export async function roundDiffFiles(deps: RoundDiffDeps, ref: RoundRef): Promise<Result<RoundDiffFiles>> {
  const located = locate(deps, ref);
  if (!located.ok) return located;
  const { round, root, from, to } = located.value;
  const files = await rawFiles(root, from, to);
  if (!files.ok) return files;
  return ok({ roundId: round.id, ordinal: round.ordinal, from, to, files: files.value.map(({ path, oldPath, status }) => ({ path, oldPath, status })) });
}

/** The file `path` names on `side` of the round's diff (a rename's base is its old path). */
export function fileOnRoundSide(files: readonly RawRoundFile[], path: string, side: Side): { file: RawRoundFile; oid: string } | null {
  for (const file of files) {
    const named = side === 'base' ? (file.oldPath ?? file.path) : file.path;
    const oid = side === 'base' ? file.oldOid : file.newOid;
    if (named === path && oid) return { file, oid };
  }
  return null;
}

/** `rennet/rounds/readBlob`: one side of one file the round changed, bounded. */
export async function readRoundBlob(deps: RoundDiffDeps, params: RoundBlobParams): Promise<Result<BlobContent>> {
  const checked = checkRepoRelativePath(params.path);
  if (!checked.ok) return checked;
  const located = locate(deps, params);
  if (!located.ok) return located;
  const { round, root, from, to } = located.value;
  const files = await rawFiles(root, from, to);
  if (!files.ok) return files;
  const found = fileOnRoundSide(files.value, params.path, params.side);
  if (!found) return err(rennetError('not-found', `${params.path} is not a file round ${round.ordinal} changed on its ${params.side === 'base' ? 'before' : 'after'} side`, { path: params.path }));
  try {
    const read = await readBlobBounded(root, found.oid);
    if (!read.ok) return err(rennetError('git-failed', `could not read ${params.path} of round ${round.ordinal}: ${read.stderr}`));
    return ok({ path: params.path, side: params.side, oid: found.oid, ...read.value });
  } catch (error) {
    return err(rennetError('git-failed', `git could not run in ${root}: ${(error as Error).message}`));
  }
}

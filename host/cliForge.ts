import type { AskCommand, AskIntent, LineAnchor } from '../protocol/asks';
import { ReviewDescriptor, type PublishReceipt } from '../protocol/exits';
import type { GatesReport, MergeMethod, MergeResult } from '../protocol/gates';
import type { Patchset, Side } from '../protocol/patchset';
import { err, ok, rennetError, type Result } from '../protocol/result';
import type { ReportTarget } from '../protocol/review';
import { askLaneFor, type PullRequestTarget, type Session } from '../protocol/session';
import { AskLog } from './asks/log';
import { sessionPublisher, type Publisher } from './exits/publish';
import { openRepo } from './capture/repo';
import { forgeAdapter } from './forge/adapters';
import { mergeWhenGatesPass, readGatesReport } from './forge/gates';
import { ForgeRegistryHolder, ForgeService } from './forge/service';
import { ReviewService } from './service';
import type { Store } from './store';

/**
 * The CLI's forge commands (`review --pr`, `ask`, `post-review`): the same host code the VS Code
 * host runs, with credentials from the environment (GITHUB_TOKEN / GH_TOKEN / GITLAB_TOKEN, then
 * the gh / glab CLIs) and forges from RENNET_FORGES.
 */

export function cliForges(env: Readonly<Record<string, string | undefined>>): ForgeService {
  return new ForgeService(new ForgeRegistryHolder(env), { env, cli: env.RENNET_FORGE_CLI_TOKENS !== '0' }, forgeAdapter);
}

/** The session of a request the CLI reviewed (refused when it was never reviewed here). */
export async function pullRequestSession(service: ReviewService, forges: ForgeService, repoDir: string, input: string): Promise<Result<{ session: Session; target: PullRequestTarget }>> {
  const target = await forges.resolve(repoDir, input);
  if (!target.ok) return target;
  const session = service.listSessions().find((s) => s.target.kind === 'pull-request' && sameTarget(s.target, target.value));
  if (!session) return err(rennetError('not-found', `${input} has no review here yet: run \`rennet review --repo ${repoDir} --pr ${input}\` first`));
  return ok({ session, target: target.value });
}

function sameTarget(a: PullRequestTarget, b: PullRequestTarget): boolean {
  return a.provider === b.provider && a.host === b.host && a.owner === b.owner && a.repo === b.repo && a.number === b.number;
}

export function reportTargetOf(target: PullRequestTarget, patchset: Pick<Patchset, 'head' | 'base'>): ReportTarget {
  return { kind: 'pr', provider: target.provider, owner: target.owner, repo: target.repo, number: target.number, headSha: patchset.head, baseSha: patchset.base };
}

export interface CliAskInput {
  intent: AskIntent;
  text: string;
  path?: string;
  line?: number;
  endLine?: number;
  side?: Side;
}

/**
 * Stages one ask on the request's review. A line anchor must lie inside one hunk of the file on
 * that side (what the editor's comment ranges offer); with no path the ask is general and travels
 * in the review body.
 */
export function cliAsk(store: Store, session: Session, patchset: Patchset, input: CliAskInput, now: string): Result<{ ask: string; session: string }> {
  let anchor: LineAnchor | { kind: 'none' };
  if (input.path === undefined) {
    if (input.line !== undefined || input.endLine !== undefined) return err(rennetError('invalid-request', '--line needs --path'));
    anchor = { kind: 'none' };
  } else {
    if (input.line === undefined) return err(rennetError('invalid-request', '--path needs --line (an ask about a whole file is a general ask: omit --path and name the file in --text)'));
    const side = input.side ?? 'head';
    const start = input.line;
    const end = input.endLine ?? input.line;
    if (end < start) return err(rennetError('invalid-request', '--end-line is before --line'));
    const file = patchset.files.find((f) => (side === 'base' ? (f.oldPath ?? f.path) : f.path) === input.path && (side === 'head' ? f.status !== 'deleted' : f.status !== 'added'));
    if (!file) return err(rennetError('invalid-path', `${input.path} is not a changed file on the ${side} side of this review`));
    const inOneHunk = file.hunks.some((h) => {
      const from = side === 'head' ? h.newStart : h.oldStart;
      const count = side === 'head' ? h.newLines : h.oldLines;
      return start >= from && end <= from + count - 1;
    });
    if (!inOneHunk) return err(rennetError('invalid-request', `${input.path} lines ${start}-${end} (${side}) are not inside one changed hunk; an ask anchors on lines the diff shows`));
    anchor = { kind: 'line', patchsetId: patchset.id, path: input.path, side, startLine: start, endLine: end };
  }
  // The lane the editor and the board would give it: a teammate's request posts, one's own work loops in rounds.
  const command: AskCommand = {
    type: 'stage',
    anchor,
    text: input.text,
    intent: input.intent,
    lane: askLaneFor({ session, pullRequest: new ReviewService({ store }).pullRequestRecord(session.id) ?? undefined }),
  };
  const appended = new AskLog(store).command(session.id, command, now);
  if (!appended.ok) return appended;
  const event = appended.value.event;
  return ok({ ask: event.type === 'stage' ? event.askId : '', session: session.id });
}

export function cliPublisher(store: Store, service: ReviewService, forges: ForgeService): Publisher {
  return sessionPublisher(store, service, new AskLog(store), () => forges.access());
}

export type VerdictFlag = 'approve' | 'comment' | 'request-changes';

/**
 * `post-review`: --verdict sets the durable override first (as the preview's control does), so
 * the dry run and the post compose the same review. Dry run: the descriptor, nothing sent.
 */
export async function cliPostReview(
  store: Store,
  publisher: Publisher,
  session: Session,
  options: { verdict?: VerdictFlag; dryRun: boolean; expectComposition?: string },
  now: string,
): Promise<Result<{ kind: 'dry-run'; descriptor: ReviewDescriptor } | { kind: 'posted'; receipt: PublishReceipt }>> {
  if (options.verdict) {
    const current = new AskLog(store).projection(session.id);
    if (!current.ok) return current;
    if (current.value.verdictOverride !== options.verdict) {
      const set = new AskLog(store).command(session.id, { type: 'setVerdictOverride', verdict: options.verdict }, now);
      if (!set.ok) return set;
    }
  }
  const preview = publisher.preview(session.id);
  if (!preview.ok) return preview;
  if (!preview.value.composed.ok) {
    const refusal = preview.value.composed.error;
    return err(rennetError('invalid-request', `the review cannot be composed (${refusal.reason}): ${refusal.message}`, refusal.detail));
  }
  const composed = preview.value.composed.value;
  if (options.expectComposition && options.expectComposition !== composed.descriptor.compositionId) {
    return err(
      rennetError(
        'stale-composition',
        `the review composes to ${composed.descriptor.compositionId}, not the expected ${options.expectComposition}: something changed since (asks, verdict, patchset); nothing was posted`,
      ),
    );
  }
  if (options.dryRun) return ok({ kind: 'dry-run', descriptor: composed.descriptor });
  const posted = await publisher.post(session.id, composed.descriptor.compositionId);
  return posted.ok ? ok({ kind: 'posted', receipt: posted.value }) : posted;
}

/** `gates`: the request's merge gates read now, and the local copy's freshness against its head. */
export async function cliGates(forges: ForgeService, repoDir: string, input: string): Promise<Result<GatesReport>> {
  const target = await forges.resolve(repoDir, input);
  if (!target.ok) return target;
  const access = forges.access();
  if (!access.ok) return access;
  const repo = await openRepo(repoDir);
  if (!repo.ok) return repo;
  return readGatesReport(access.value, repo.value.root, target.value);
}

/** `merge`: merges the request pinned to `expectHead`, only when every gate passes (exit 3 otherwise, nothing merged). */
export async function cliMerge(forges: ForgeService, repoDir: string, input: string, options: { expectHead: string; method: MergeMethod }): Promise<Result<MergeResult>> {
  const target = await forges.resolve(repoDir, input);
  if (!target.ok) return target;
  const access = forges.access();
  if (!access.ok) return access;
  const repo = await openRepo(repoDir);
  if (!repo.ok) return repo;
  return mergeWhenGatesPass(access.value, repo.value.root, target.value, options);
}

/** The gates as lines: the freshness first, then one line per gate (state, name, detail), then whether every gate passes. */
export function gatesText(report: GatesReport): string {
  const mark = { pass: 'pass   ', fail: 'FAIL   ', pending: 'pending' } as const;
  const lines = [`${report.provider === 'gitlab' ? '!' : '#'}${report.number} at ${report.head} (${report.state})`, `freshness: ${report.freshness.state} — ${report.freshness.message}`];
  for (const g of report.gates) lines.push(`${mark[g.state]}  ${g.name} — ${g.detail}`);
  const blocking = report.gates.filter((g) => g.state !== 'pass').length;
  lines.push(blocking === 0 ? 'every gate passes' : `${blocking} gate${blocking === 1 ? '' : 's'} would block a merge`);
  return lines.join('\n');
}

/**
 * What the Hand off view shows for the active review, decided without VS Code: the view's
 * description and badge, its lanes by entry mode, one row per staged ask or bare line comment
 * (icon, words, context value, what a click does), the exit row and the refusals stated where an
 * exit would be. Pure (no `vscode` import): handOff.ts maps the rows onto a TreeView, and
 * test/unit/extension/handOffPlan.test.ts tests them with fixtures.
 *
 * Lanes follow who the review is for:
 * - a teammate's pull/merge request concludes in a posted review: one lane, "Post review" (staged
 *   `post-review` asks and bare line comments), then "Preview and post review…" and, once posted,
 *   what was posted;
 * - one's own request, a branch or the working tree continues in rounds: the lane is "Changes"
 *   (`changes` and `dispatch-round` asks), then Dispatch Round (or the host's refusal in its
 *   words; a working-tree review has no branch to commit on). One's own request whose head is
 *   behind a round's commits says so where the head is checked, with the push. Asks staged for
 *   another exit than the mode's are listed too (never hidden), each lane with what becomes of them.
 */
import { findingKey, type Ask, type AskAnchor, type AskIntent, type AskLane, type AskProjection, type CodeSpan, type LineComment } from '../protocol/asks';
import { LENS_TITLES, type Lens } from '../protocol/board';
import type { PublishReceipt } from '../protocol/exits';
import { pullRequestLabel } from '../protocol/forge';
import { allGatesPass, type Gate, type GateKind, type GatesReport, type MergeResult, type RefreshAction } from '../protocol/gates';
import type { Result } from '../protocol/result';
import type { PullRequestFreshness, RoundsOrderResult } from '../protocol/rpc';
import type { Round, RoundPhase, RoundsLanding } from '../protocol/rounds';
import type { SessionSnapshot } from '../protocol/session';
import { eventWords } from './forgePlan';
import { targetLabel } from './titles';
import { md, mdModel, ui, uiJoin, uiText, type Md, type UiText } from './uiText';

/** Commands the rows run (registered by handOff.ts; the row itself is the argument). */
export const HAND_OFF_COMMANDS = {
  open: 'rennet.handOff.openInEditor',
  reveal: 'rennet.handOff.showOnBoard',
  edit: 'rennet.handOff.editText',
  unstage: 'rennet.handOff.unstage',
  openLink: 'rennet.handOff.openLink',
  refresh: 'rennet.handOff.refresh',
  preview: 'rennet.previewReview',
  dispatchRound: 'rennet.dispatchRound',
  retryRound: 'rennet.retryRound',
  cancelRound: 'rennet.cancelRound',
  land: 'rennet.rounds.land',
  captureNewHead: 'rennet.captureNewHead',
  openPullRequest: 'rennet.openPullRequest',
  merge: 'rennet.gates.merge',
  refreshGates: 'rennet.gates.refresh',
} as const;

/** The longest label an ask's first line gets before it is cut with "…". */
export const ASK_LABEL_MAX_CHARS = 120;

/** Who the review is for: a teammate's request (post a review) or one's own work (rounds). */
export type HandOffMode = 'teammate' | 'own-request' | 'branch' | 'working-tree';

export interface HandOffInput {
  /** The active review (the focused or last active board); null when none is open. */
  session: SessionSnapshot | null;
  /** Its ask projection; null while it is read. */
  projection: AskProjection | null;
  /** Flagged finding titles of the shown generation, by `findingKey`, for finding anchors. */
  findingTitles?: ReadonlyMap<string, string>;
  /** The newest receipt known for the session, and whether it is for the composition the host previews now. */
  receipt?: { receipt: PublishReceipt; current: boolean } | null;
  /** Why the host cannot compose the review now (body too long, …): stated where the exit is. */
  composeRefusal?: string | null;
  /** The request's live head (pull-request sessions): null while unchecked. */
  freshness?: Result<PullRequestFreshness> | null;
  /**
   * One's own branch: the order a dispatch would send now (or the host's refusal; undefined while
   * read), the rounds ledger, and where a sibling's commits stand (the landing line; undefined while read).
   */
  rounds?: { order: Result<RoundsOrderResult> | undefined; ledger: readonly Round[]; landing?: RoundsLanding | undefined } | null;
  /** Pull-request sessions: the merge gates as last read (undefined while read) and a merge made from here. */
  gates?: HandOffGates | null;
}

export interface HandOffGates {
  read: Result<GatesReport> | undefined;
  merged?: MergeResult | null;
}

/** What a row stands for, for the commands run on it. */
export type HandOffSubject =
  | { kind: 'ask'; sessionId: string; askId: string; text: string; intent: AskIntent; anchor: AskAnchor }
  | { kind: 'line-comment'; sessionId: string; key: string; text: string; anchor: CodeSpan }
  | { kind: 'link'; sessionId: string; url: string };

export interface HandOffRow {
  /** Stable across refreshes (TreeItem.id): VS Code keeps selection and expansion by it. */
  id: string;
  label: UiText;
  description?: UiText;
  tooltip?: UiText | Md;
  /** A codicon id (a ThemeIcon id). */
  icon: string;
  /** A theme color id for the icon (`testing.iconPassed`, …). */
  iconColor?: string;
  /** package.json's view/item/context menus match it. */
  contextValue: string;
  /** What a click runs; its argument is the row itself unless `arguments` says otherwise. */
  command?: { id: string; title: string; arguments?: unknown[] };
  subject?: HandOffSubject;
  children?: HandOffRow[];
}

export interface HandOffPlan {
  /** The view's description: the review's target. */
  description: UiText | undefined;
  /** The view's message (shown above the rows; the only content when no review is active). */
  message: UiText | undefined;
  badge: { value: number; tooltip: UiText } | undefined;
  mode: HandOffMode | null;
  rows: HandOffRow[];
}

/** Who the review is for, from its target and the request as read from the forge. */
export function handOffMode(session: SessionSnapshot): HandOffMode {
  const target = session.session.target;
  if (target.kind === 'branch') return 'branch';
  if (target.kind === 'working-tree') return 'working-tree';
  // A request read without credentials (viewer unknown) is a teammate's until the forge says otherwise.
  return session.pullRequest?.entry === 'own' ? 'own-request' : 'teammate';
}

/** Whether the review loops rounds: a branch review, or one's own request (the host still decides what a dispatch would send). */
export function loopsRounds(session: SessionSnapshot): boolean {
  const mode = handOffMode(session);
  return mode === 'branch' || mode === 'own-request';
}

const INTENT_ICONS: Record<AskIntent, string> = {
  'request-change': 'request-changes',
  comment: 'comment',
  question: 'question',
  approval: 'pass',
};

const INTENT_WORDS: Record<AskIntent, string> = {
  'request-change': 'Request change',
  comment: 'Comment',
  question: 'Question',
  approval: 'Approval',
};

export function planHandOff(input: HandOffInput): HandOffPlan {
  const { session, projection } = input;
  if (!session) {
    return {
      description: undefined,
      message: ui`No review is active. Open one (Rennet: Review Pull Request, Review Branch or Show Board) and its asks are handed off from here.`,
      badge: undefined,
      mode: null,
      rows: [],
    };
  }
  const mode = handOffMode(session);
  const description = viewDescription(session, mode);
  if (!projection) {
    return { description, message: ui`Reading the staged asks…`, badge: undefined, mode, rows: [] };
  }
  const sessionId = session.session.id;
  const staged = projection.asks.filter((a) => a.state === 'staged');
  const badge = staged.length > 0 ? { value: staged.length, tooltip: ui`${staged.length} ask${staged.length === 1 ? '' : 's'} staged in this review` } : undefined;
  const askRow = (ask: Ask) => planAskRow(ask, session, input.findingTitles);
  const lineRows = Object.entries(projection.lineComments)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, comment]) => planLineCommentRow(key, comment, session));
  const inLanes = (lanes: readonly AskLane[]) => staged.filter((a) => lanes.includes(a.lane)).map(askRow);
  const postRows = [...inLanes(['post-review']), ...lineRows];
  const changeRows = inLanes(['changes', 'dispatch-round']);

  const rows: HandOffRow[] = [...freshnessRows(sessionId, input.freshness ?? null, mode === 'own-request' ? session : null)];
  if (mode === 'teammate') {
    rows.push(lane('post-review', 'Post review', postRows, ui`Nothing staged: with no asks the review proposes Approve, grounded in the boards.`));
    rows.push(...postExitRows(sessionId, input));
    if (changeRows.length > 0) {
      rows.push(lane('changes', 'Changes', changeRows, null));
      rows.push(notice('changes-note', ui`Work orders are for your own branch or request; on a teammate's request these asks stay staged.`, 'info'));
    }
  } else {
    rows.push(lane('changes', 'Changes', changeRows, ui`No changes staged.`));
    rows.push(...roundRows(sessionId, session, input.rounds ?? null));
    const target = session.session.target;
    if (target.kind === 'branch') rows.push(openRequestRow(session.session.repoRoot, target.head, target.base, changeRows.length));
    if (postRows.length > 0) {
      rows.push(lane('post-review', 'Post review', postRows, null));
      if (mode === 'own-request') {
        rows.push(...postExitRows(sessionId, input));
      } else {
        const what = mode === 'branch' ? 'A branch review' : 'A working-tree review';
        rows.push(
          notice('post-refusal', ui`${what} has no pull or merge request to post to; these asks stay staged. Open the request, then review it with Rennet: Review Pull Request.`, 'circle-slash'),
        );
      }
    }
  }
  if (session.session.target.kind === 'pull-request') rows.push(...gateRows(sessionId, session.session.target.provider, input.gates ?? null));
  return { description, message: undefined, badge, mode, rows };
}

/** What a running round is doing, in words. */
export const ROUND_PHASE_WORDS: Record<RoundPhase, string> = {
  prep: 'preparing the work order',
  worker: 'the coding agent is working',
  commit: 'measuring what changed',
  report: 'capturing the result',
  verification: 'drafting and verifying the report',
  regeneration: 'regenerating the boards',
};

/**
 * Where Dispatch Round is: the live action when the host would send an order, the host's refusal
 * in its words otherwise (nothing staged, only questions, no round lane), the running round with
 * Cancel, and the ledger — each round's outcome, a failed one with Retry when it can be retried.
 */
function roundRows(sessionId: string, session: SessionSnapshot, rounds: NonNullable<HandOffInput['rounds']> | null): HandOffRow[] {
  // A branch review and one's own request loop (the host composes or refuses the order); the working tree has no branch to commit on.
  if (session.session.target.kind === 'working-tree') {
    return [notice('dispatch-refusal', ui`Rounds run on a branch review: review the branch (Rennet: Review Branch) to dispatch these asks to a coding agent. They stay staged.`, 'info')];
  }
  const rows: HandOffRow[] = [];
  const ledger = rounds?.ledger ?? [];
  const running = ledger.find((r) => r.state === 'running');
  if (running) {
    rows.push({
      id: `round:running:${running.id}`,
      label: ui`Round ${running.ordinal}: ${ROUND_PHASE_WORDS[running.phase]}…`,
      description: ui`${running.asks.length} ask${running.asks.length === 1 ? '' : 's'} · ${running.worker.kind}`,
      tooltip: ui`Round ${running.ordinal} runs in ${running.workspace.root} on ${running.workspace.workBranch ?? running.workspace.branch}. Click to cancel it (the agent's process is stopped; what it changed stays in the workspace).`,
      icon: 'sync~spin',
      contextValue: 'handoff-round-running',
      command: { id: HAND_OFF_COMMANDS.cancelRound, title: 'Cancel Round', arguments: [sessionId] },
    });
  } else if (!rounds || rounds.order === undefined) {
    rows.push(notice('dispatch-reading', ui`Reading what a round would do…`, 'loading~spin'));
  } else if (rounds.order.ok) {
    const order = rounds.order.value;
    const n = order.asks.length;
    rows.push({
      id: 'exit:dispatch-round',
      label: ui`Dispatch round ${ledger.length + 1}…`,
      description: ui`${n} ask${n === 1 ? '' : 's'} to the coding agent`,
      tooltip: ui`Write the work order (${n} ask${n === 1 ? '' : 's'}, verbatim with their lines) and hand it to the coding agent in ${order.workspace.root}, on ${order.workspace.workBranch ?? order.workspace.branch}. Shown before anything runs.`,
      icon: 'run-all',
      contextValue: 'handoff-exit-dispatch',
      command: { id: HAND_OFF_COMMANDS.dispatchRound, title: 'Dispatch Round', arguments: [sessionId] },
    });
  } else {
    rows.push(notice('dispatch-refusal', ui`${rounds.order.error.message}`, 'circle-slash'));
  }
  const landing = rounds?.landing;
  if (landing?.line && landing.workBranch) rows.push(landingRow(sessionId, landing.line, landing.branch, landing.workBranch));
  const finished = ledger.filter((r) => r.state !== 'running');
  if (finished.length > 0) {
    rows.push({
      id: 'rounds',
      label: ui`Rounds`,
      description: ui`${finished.length}`,
      icon: 'history',
      contextValue: 'handoff-rounds',
      children: [...finished].reverse().map((r) => roundRow(sessionId, r)),
    });
  }
  return rows;
}

/**
 * The sibling's commits against the branch, in the host's words (read from git when asked), with
 * Land: `git merge --ff-only` of the sibling in the checkout that has the branch out.
 */
function landingRow(sessionId: string, line: string, branch: string, workBranch: string): HandOffRow {
  return {
    id: `landing:${workBranch}`,
    label: uiText(line),
    description: ui`Land`,
    tooltip: ui`Land fast-forwards ${branch} to ${workBranch} (git merge --ff-only ${workBranch}, in the checkout that has ${branch} out). Git refuses a ${branch} that has moved its own way, or a merge that would overwrite your uncommitted edits; then nothing changes and git's words are shown.`,
    icon: 'git-merge',
    contextValue: 'handoff-landing',
    command: { id: HAND_OFF_COMMANDS.land, title: 'Land', arguments: [sessionId] },
  };
}

function roundRow(sessionId: string, round: Round): HandOffRow {
  const base = { id: `round:${round.id}`, contextValue: `handoff-round-${round.state}` };
  const range = round.range ? ` · ${round.range.from.slice(0, 7)}..${round.range.to.slice(0, 7)}` : '';
  switch (round.state) {
    case 'returned': {
      const c = round.report?.counts;
      const words = c ? `${c.addressed} addressed · ${c.partial} partial · ${c.untouched} untouched${c.beyond > 0 ? ` · ${c.beyond} beyond` : ''}` : 'no report';
      return {
        ...base,
        label: ui`Round ${round.ordinal} is back: ${words}`,
        description: uiText(`${round.worker.kind}${range}`),
        tooltip: ui`Round ${round.ordinal} changed ${round.diff?.files ?? 0} files (+${round.diff?.additions ?? 0} −${round.diff?.deletions ?? 0}); every outcome was verified against that diff.`,
        icon: 'pass',
      };
    }
    case 'unchanged':
      return {
        ...base,
        label: ui`Round ${round.ordinal} changed nothing`,
        description: uiText(round.worker.kind),
        tooltip: ui`The coding agent ended its turn without changing a file; the boards stay as they were.`,
        icon: 'circle-outline',
      };
    case 'cancelled':
      return { ...base, label: ui`Round ${round.ordinal} was cancelled`, description: uiText(round.worker.kind), tooltip: ui`${round.failure?.message ?? 'cancelled'}`, icon: 'circle-slash' };
    default: {
      const f = round.failure;
      const retry = f?.retryable === true;
      return {
        ...base,
        label: ui`Round ${round.ordinal} failed at ${f?.phase ?? round.phase}${retry ? ' — Retry' : ''}`,
        description: uiText(round.worker.kind),
        tooltip: ui`${f?.message ?? 'failed'}${retry ? ' Click to retry from where it stopped (the coding agent does not run again).' : ''} The asks it carried stay staged.`,
        icon: 'error',
        ...(retry ? { command: { id: HAND_OFF_COMMANDS.retryRound, title: 'Retry Round', arguments: [sessionId, round.id] } } : {}),
      };
    }
  }
}

/**
 * One's own branch: once nothing is left to ask, the exit is the pull request itself (pushed and
 * opened, or reused, by "Open Pull Request"); while asks remain it is a muted destination line.
 */
function openRequestRow(repo: string, branch: string, base: string, remaining: number): HandOffRow {
  if (remaining > 0) {
    return notice('open-request-later', ui`Pull request: ${branch} → ${base} opens from here once nothing is left to ask.`, 'git-pull-request-draft');
  }
  return {
    id: 'exit:open-request',
    label: ui`Open pull request…`,
    description: ui`${branch} → ${base}`,
    tooltip: ui`Push ${branch} and open (or reuse) its pull or merge request: the title and description are drafted from its commits and boards, shown before anything is sent.`,
    icon: 'git-pull-request-create',
    contextValue: 'handoff-exit-open-request',
    command: { id: HAND_OFF_COMMANDS.openPullRequest, title: 'Open Pull Request', arguments: [{ repo, branch, base }] },
  };
}

function viewDescription(session: SessionSnapshot, mode: HandOffMode): UiText {
  const label = targetLabel(session.session.target);
  if (mode === 'teammate') return uiJoin([label, ui`teammate's`], ' · ');
  if (mode === 'own-request') return uiJoin([label, ui`yours`], ' · ');
  return label;
}

function lane(id: AskLane | 'changes', title: string, children: HandOffRow[], empty: UiText | null): HandOffRow {
  const count = children.length;
  return {
    id: `lane:${id}`,
    label: uiText(title),
    description: count === 0 ? ui`nothing staged` : ui`${count} staged`,
    icon: id === 'post-review' ? 'git-pull-request' : 'tools',
    contextValue: `handoff-lane-${id}`,
    children: count > 0 || !empty ? children : [notice(`${id}:empty`, empty, 'circle-outline')],
  };
}

function notice(id: string, label: UiText, icon: string, tooltip?: UiText): HandOffRow {
  return { id: `notice:${id}`, label, tooltip: tooltip ?? label, icon, contextValue: 'handoff-notice' };
}

/** The exit of a request's review: Preview (or the refusal to compose), then what was posted. */
function postExitRows(sessionId: string, input: HandOffInput): HandOffRow[] {
  const rows: HandOffRow[] = [];
  const preview = { id: HAND_OFF_COMMANDS.preview, title: 'Preview and post review', arguments: [sessionId] };
  if (input.composeRefusal) {
    rows.push({
      id: 'exit:refused',
      label: ui`Cannot post this review: ${input.composeRefusal}`,
      tooltip: ui`The host refuses to compose this review: ${input.composeRefusal}`,
      icon: 'circle-slash',
      contextValue: 'handoff-exit-refused',
      command: preview,
    });
  } else {
    rows.push({
      id: 'exit:preview',
      label: ui`Preview and post review…`,
      tooltip: ui`The exact review that would post, with its verdict, comments and folded asks, and one Post button.`,
      icon: 'preview',
      contextValue: 'handoff-exit-preview',
      command: preview,
    });
  }
  const held = input.receipt;
  if (held) rows.push(receiptRow(sessionId, held.receipt, held.current));
  rows.push(rereviewRow(sessionId));
  return rows;
}

/** The command a re-review row runs (extension/commands/rereview.ts). */
export const REREVIEW_COMMAND = 'rennet.rereviewSinceLastReview';

/** "Re-review since your last review…": the delta since it, and each of its items resolved or open. */
export function rereviewRow(sessionId: string): HandOffRow {
  return {
    id: 'exit:rereview',
    label: ui`Re-review since your last review…`,
    tooltip: ui`Reads only what changed since your earlier review of this request (the whole change after a force push or rebase, said), judges each of its comments resolved, with the changed lines that show it, or still open, and drafts new boards. The next post opens with "Prior review: k of n resolved".`,
    icon: 'history',
    contextValue: 'handoff-rereview',
    command: { id: REREVIEW_COMMAND, title: 'Re-review since your last review', arguments: [sessionId] },
  };
}

/** "Posted: Approve · 2 comments": opens the review on its forge. */
export function receiptRow(sessionId: string, receipt: PublishReceipt, current: boolean): HandOffRow {
  const forge = receipt.provider === 'gitlab' ? 'GitLab' : 'GitHub';
  const comments = `${receipt.comments} comment${receipt.comments === 1 ? '' : 's'}`;
  const notes: string[] = [];
  if (receipt.reused) notes.push(`already on ${forge}`);
  if (!current) notes.push('an earlier version of this review');
  return {
    id: `receipt:${receipt.markerId}`,
    label: current ? ui`Posted: ${eventWords(receipt.event)} · ${comments}` : ui`Posted earlier: ${eventWords(receipt.event)} · ${comments}`,
    ...(notes.length > 0 ? { description: uiText(notes.join(' · ')) } : {}),
    tooltip: ui`Posted to ${forge} at ${receipt.postedAt} on ${receipt.headSha.slice(0, 7)}${receipt.reused ? ' (a retry found it already there, so nothing was posted twice)' : ''}. Opens ${receipt.url}`,
    icon: current ? 'pass-filled' : 'history',
    contextValue: 'handoff-receipt',
    command: { id: HAND_OFF_COMMANDS.openLink, title: 'Open the posted review' },
    subject: { kind: 'link', sessionId, url: receipt.url },
  };
}

/**
 * The request's head as last read: moved (Capture New Head), closed or merged, or unreadable. One's
 * own request (`own`) whose head is behind the review's — a round's commits not pushed yet — says
 * so instead, and its action is the push (Open pull request… reuses the request): capturing the
 * request's head would go back to before the round.
 */
function freshnessRows(sessionId: string, freshness: Result<PullRequestFreshness> | null, own: SessionSnapshot | null = null): HandOffRow[] {
  if (!freshness) return [];
  if (!freshness.ok) {
    return [
      {
        id: 'fresh:error',
        label: ui`Could not read the request's head: ${freshness.error.message}`,
        tooltip: ui`${freshness.error.message} — click to try again.`,
        icon: 'warning',
        contextValue: 'handoff-freshness-error',
        command: { id: HAND_OFF_COMMANDS.refresh, title: 'Check again', arguments: [] },
      },
    ];
  }
  const rows: HandOffRow[] = [];
  const f = freshness.value;
  const record = own?.pullRequest;
  if (f.moved && f.unpushed && own && record) {
    const n = f.unpushed;
    rows.push({
      id: `fresh:unpushed:${f.liveHeadSha}:${f.capturedHeadSha}`,
      label: ui`The request's head is ${n} commit${n === 1 ? '' : 's'} behind your ${record.headRef} — Push`,
      description: ui`${f.liveHeadSha.slice(0, 7)} → ${f.capturedHeadSha.slice(0, 7)}`,
      tooltip: ui`This review read ${f.capturedHeadSha} on ${record.headRef}; the request's head on the forge is still ${f.liveHeadSha}, ${n} commit${n === 1 ? '' : 's'} behind it (a round's commits are not pushed yet). Nothing is posted or merged on lines the forge does not have: click to push ${record.headRef} (Open pull request… reuses this request), then post.`,
      icon: 'cloud-upload',
      contextValue: 'handoff-unpushed',
      command: { id: HAND_OFF_COMMANDS.openPullRequest, title: 'Push', arguments: [{ repo: own.session.repoRoot, branch: record.headRef, base: record.baseRef }] },
    });
  } else if (f.moved) {
    rows.push({
      id: `fresh:moved:${f.liveHeadSha}`,
      label: ui`Head moved to ${f.liveHeadSha.slice(0, 7)} since capture — Capture New Head`,
      tooltip: ui`The request's head is ${f.liveHeadSha} on the forge; this review read ${f.capturedHeadSha}. A review is posted only on the head it read: capture the new head as the next patchset, read it, then post.`,
      icon: 'warning',
      contextValue: 'handoff-stale',
      command: { id: HAND_OFF_COMMANDS.captureNewHead, title: 'Capture New Head', arguments: [sessionId] },
    });
  }
  if (f.state !== 'open') {
    rows.push(notice(`fresh:${f.state}`, ui`This request is ${f.state}: a review is posted only to an open request.`, 'circle-slash'));
  }
  return rows;
}

// ─── Rows of asks and line comments ──────────────────────────────────────────────────────────

/** The first line of an ask's text, without Markdown heading or quote marks, cut to ASK_LABEL_MAX_CHARS. */
export function firstLine(text: string): string {
  const line =
    text
      .split(/\r\n|\r|\n/)
      .map((l) => l.trim())
      .find((l) => l.length > 0) ?? '';
  const bare = line.replace(/^(?:#{1,6}\s+|>\s*|[-*+]\s+)/, '').trim() || line;
  return bare.length > ASK_LABEL_MAX_CHARS ? `${bare.slice(0, ASK_LABEL_MAX_CHARS - 1)}…` : bare;
}

function lineRange(start: number, end: number): string {
  return start === end ? `${start}` : `${start}-${end}`;
}

/** "src/app.ts:5-8 (new)", with "earlier capture" when it is not on the capture under review. */
export function spanWords(span: CodeSpan, activePatchsetId: string | null): string {
  const where = `${span.path}:${lineRange(span.startLine, span.endLine)} (${span.side === 'head' ? 'new' : 'old'})`;
  return span.patchsetId === activePatchsetId ? where : `${where} · earlier capture`;
}

/**
 * An ask's anchor in words: `path:lines (side)`, `finding: title`, `board: Lens`, `general`. A
 * finding whose title is not on the shown boards (an earlier generation's, e.g. after Capture New
 * Head) is named by the code it cites, `finding on path:lines (side)`; its bare element id says
 * nothing to the reviewer, so it is the last resort.
 */
export function anchorWords(anchor: AskAnchor, activePatchsetId: string | null, findingTitles?: ReadonlyMap<string, string>): string {
  switch (anchor.kind) {
    case 'line':
      return spanWords(anchor, activePatchsetId);
    case 'finding': {
      const title = findingTitles?.get(findingKey(anchor));
      if (title !== undefined) return `finding: ${title}`;
      return anchor.codeRef ? `finding on ${spanWords(anchor.codeRef, activePatchsetId)}` : `finding: ${anchor.findingId}`;
    }
    case 'quote':
      return `board: ${LENS_TITLES[anchor.lens]}`;
    case 'none':
      return 'general';
  }
}

/** The captured span an ask opens in the editor (a line anchor, a finding's code_ref). */
export function openableSpan(anchor: AskAnchor): CodeSpan | null {
  if (anchor.kind === 'line') return anchor;
  if (anchor.kind === 'finding') return anchor.codeRef ?? null;
  return null;
}

/** The board element an ask shows on (a finding, a quoted element): lens, generation and element. */
export function boardElement(anchor: AskAnchor): { generationId: string; lens: Lens; elementId: string } | null {
  if (anchor.kind === 'finding') return { generationId: anchor.generationId, lens: 'flagged', elementId: anchor.findingId };
  if (anchor.kind === 'quote') return { generationId: anchor.generationId, lens: anchor.lens, elementId: anchor.elementId };
  return null;
}

/** `handoff-ask` plus `-open` (it opens in the editor) and `-board` (it shows on the board). */
export function askContextValue(anchor: AskAnchor): string {
  return `handoff-ask${openableSpan(anchor) ? '-open' : ''}${boardElement(anchor) ? '-board' : ''}`;
}

export function planAskRow(ask: Ask, session: SessionSnapshot, findingTitles?: ReadonlyMap<string, string>): HandOffRow {
  const active = session.session.activePatchsetId;
  const where = anchorWords(ask.anchor, active, findingTitles);
  const click = openableSpan(ask.anchor)
    ? { id: HAND_OFF_COMMANDS.open, title: 'Open in Editor' }
    : boardElement(ask.anchor)
      ? { id: HAND_OFF_COMMANDS.reveal, title: 'Show on Board' }
      : { id: HAND_OFF_COMMANDS.edit, title: 'Edit Text' };
  return {
    id: `ask:${ask.id}`,
    label: uiText(firstLine(ask.text) || '(no text)'),
    description: uiText(where),
    tooltip: md`**${INTENT_WORDS[ask.intent]}** · ${where}

${mdModel(ask.text)}`,
    icon: INTENT_ICONS[ask.intent],
    contextValue: askContextValue(ask.anchor),
    command: click,
    subject: { kind: 'ask', sessionId: session.session.id, askId: ask.id, text: ask.text, intent: ask.intent, anchor: ask.anchor },
  };
}

export function planLineCommentRow(key: string, comment: LineComment, session: SessionSnapshot): HandOffRow {
  const where = spanWords(comment.anchor, session.session.activePatchsetId);
  return {
    id: `line:${key}`,
    label: uiText(firstLine(comment.text) || '(no text)'),
    description: uiText(where),
    tooltip: md`**Line comment** · ${where}

${mdModel(comment.text)}`,
    icon: 'comment-discussion',
    contextValue: 'handoff-line-comment-open',
    command: { id: HAND_OFF_COMMANDS.open, title: 'Open in Editor' },
    subject: { kind: 'line-comment', sessionId: session.session.id, key, text: comment.text, anchor: comment.anchor },
  };
}

// ─── Editing an ask's text in a one-line box ─────────────────────────────────────────────────

/** Stands for a line break in the one-line edit box (VS Code's input box holds one line). */
export const LINE_BREAK_MARK = '⏎';

/** The text as the edit box shows it: line breaks as LINE_BREAK_MARK. */
export function editableText(text: string): string {
  return text.replace(/\r\n|\r|\n/g, LINE_BREAK_MARK);
}

/** What the edit box holds as the ask's text again: LINE_BREAK_MARK back to line breaks. */
export function editedText(value: string): string {
  return value.split(LINE_BREAK_MARK).join('\n');
}

/** The title of a finding by its key, from the shown generation's Flagged board (for `finding: title`). */
export function findingTitlesOf(findings: ReadonlyArray<{ key: string; title: string }>): Map<string, string> {
  return new Map(findings.map((f) => [f.key, f.title]));
}

/** The request's label, for the preview's tab and messages: "Pull Request #12 · acme/widgets". */
export function requestLabel(session: SessionSnapshot): UiText | null {
  const target = session.session.target;
  return target.kind === 'pull-request' ? ui`${pullRequestLabel(target)} · ${target.owner}/${target.repo}` : null;
}

// ─── Merge gates and Merge… ──────────────────────────────────────────────────────────────────

const GATE_ICONS: Record<Gate['state'], { icon: string; color: string }> = {
  pass: { icon: 'pass', color: 'testing.iconPassed' },
  fail: { icon: 'error', color: 'testing.iconFailed' },
  pending: { icon: 'watch', color: 'testing.iconQueued' },
};

const GATE_KIND_WORDS: Record<GateKind, string> = {
  check: 'check run',
  status: 'commit status',
  job: 'pipeline job',
  pipeline: 'pipeline',
  draft: 'not a draft',
  mergeable: 'merges without conflicts',
  'behind-base': 'contains the base',
  'required-reviews': 'required reviews',
  'review-at-head': 'approved at the head',
};

/** The one refresh action, as the freshness row names it. */
export const REFRESH_ACTION_WORDS: Record<RefreshAction, string> = {
  none: 'up to date',
  fetch: 'Fetch',
  checkout: 'Check out',
  pull: 'Pull',
  push: 'Push',
  rebase: 'Rebase',
  'capture-new-head': 'Capture New Head',
};

const short = (sha: string) => sha.slice(0, 7);

/**
 * A request's merge gates: the freshness line first (with its one refresh action when the local
 * copy is not the head), the gates by name with their detail (forge text, kept as text), and
 * "Merge…" only when every gate passes on an open request whose local copy is at the head — it
 * carries that head, which the merge is pinned to. A merge made from here replaces them all.
 */
export function gateRows(sessionId: string, provider: 'github' | 'gitlab', gates: HandOffGates | null): HandOffRow[] {
  if (!gates) return [];
  if (gates.merged) {
    const m = gates.merged;
    return [
      {
        id: `gates:merged:${m.head}`,
        label: ui`Merged at ${short(m.head)} (${m.method})`,
        ...(m.sha ? { description: uiText(short(m.sha)) } : {}),
        tooltip: ui`Merged on ${provider === 'gitlab' ? 'GitLab' : 'GitHub'}, pinned to ${m.head}${m.sha ? `; the base is now ${m.sha}` : ''}. Opens ${m.url}`,
        icon: 'git-merge',
        contextValue: 'handoff-merged',
        command: { id: HAND_OFF_COMMANDS.openLink, title: 'Open the merged request' },
        subject: { kind: 'link', sessionId, url: m.url },
      },
    ];
  }
  const read = gates.read;
  if (read === undefined) return [notice('gates-reading', ui`Reading the merge gates…`, 'loading~spin')];
  if (!read.ok) {
    return [
      {
        id: 'gates:error',
        label: ui`Could not read the merge gates: ${read.error.message}`,
        tooltip: ui`${read.error.message} — click to try again.`,
        icon: 'warning',
        contextValue: 'handoff-gates-error',
        command: { id: HAND_OFF_COMMANDS.refreshGates, title: 'Read the Merge Gates Again', arguments: [sessionId] },
      },
    ];
  }
  const report = read.value;
  const rows: HandOffRow[] = [freshnessRow(sessionId, report)];
  const passing = report.gates.filter((g) => g.state === 'pass').length;
  rows.push({
    id: 'gates',
    label: ui`Merge gates`,
    description: ui`${passing} of ${report.gates.length} pass at ${short(report.head)}`,
    tooltip: ui`What must hold before ${pullRequestLabel({ provider, number: report.number })} merges, read from its forge at head ${report.head}. A gate that cannot be read is pending, never a pass.`,
    icon: 'checklist',
    contextValue: 'handoff-gates',
    children: report.gates.map((g) => gateRow(g)),
  });
  const ready = report.state === 'open' && allGatesPass(report.gates);
  if (report.state !== 'open') rows.push(notice('merge-closed', ui`This request is ${report.state}: nothing to merge.`, 'circle-slash'));
  else if (!ready) {
    const blocking = report.gates.filter((g) => g.state !== 'pass').length;
    rows.push(notice('merge-blocked', ui`Merge is offered once every gate passes (${blocking} ${blocking === 1 ? 'does' : 'do'} not yet).`, 'circle-slash'));
  } else if (report.freshness.state !== 'in-sync') {
    rows.push(notice('merge-stale', ui`Every gate passes; bring your copy to the head ${short(report.head)} first (above), then Merge is offered.`, 'circle-slash'));
  } else {
    rows.push({
      id: `exit:merge:${report.head}`,
      label: ui`Merge…`,
      description: ui`${short(report.head)} · every gate passes`,
      tooltip: ui`Merge ${pullRequestLabel({ provider, number: report.number })} pinned to head ${report.head}: you choose the method and confirm first. If the head moves before the forge merges, it refuses and nothing is merged.`,
      icon: 'git-merge',
      contextValue: 'handoff-exit-merge',
      command: { id: HAND_OFF_COMMANDS.merge, title: 'Merge', arguments: [sessionId, report.head, provider, report.number] },
    });
  }
  return rows;
}

function gateRow(g: Gate): HandOffRow {
  const look = GATE_ICONS[g.state];
  return {
    id: `gate:${g.kind}:${g.name}`,
    label: uiText(g.name),
    description: uiText(g.detail),
    tooltip: ui`${g.name} (${GATE_KIND_WORDS[g.kind]}): ${g.state} — ${g.detail}`,
    icon: look.icon,
    iconColor: look.color,
    contextValue: `handoff-gate-${g.state}`,
  };
}

/** The local copy against the head: in sync, or the state with its one refresh action (Capture New Head runs it; the others name the git command). */
function freshnessRow(sessionId: string, report: GatesReport): HandOffRow {
  const f = report.freshness;
  if (f.state === 'in-sync') {
    return {
      id: `gates:fresh:in-sync:${f.prHead}`,
      label: ui`Up to date with the head ${short(f.prHead)}`,
      tooltip: uiText(f.message),
      icon: 'pass',
      iconColor: GATE_ICONS.pass.color,
      contextValue: 'handoff-gates-fresh',
    };
  }
  const capture = f.action === 'capture-new-head';
  return {
    id: `gates:fresh:${f.state}:${f.prHead}`,
    label: uiText(f.message),
    description: uiText(REFRESH_ACTION_WORDS[f.action]),
    tooltip: capture ? ui`${f.message} Click to capture the request's head as the next patchset.` : ui`${f.message} Click to read the gates and refs again once you have.`,
    icon: 'warning',
    contextValue: `handoff-gates-stale-${f.action}`,
    command: capture
      ? { id: HAND_OFF_COMMANDS.captureNewHead, title: 'Capture New Head', arguments: [sessionId] }
      : { id: HAND_OFF_COMMANDS.refreshGates, title: 'Read the Merge Gates Again', arguments: [sessionId] },
  };
}

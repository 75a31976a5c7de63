import { createHash } from 'node:crypto';
import { AskKeyPart, type Ask, type AskIntent, type AskProjection, type CodeSpan, type LineComment } from '../../protocol/asks';
import { LENS_TITLES, LENSES } from '../../protocol/board';
import {
  FORGE_DIFF_CONTEXT_LINES,
  FORGE_TEXT_LIMITS,
  GITLAB_VERDICT_LABELS,
  REVIEW_MARKER_ID_HEX_LENGTH,
  REVIEW_NOTE_QUOTE_MAX_CHARS,
  ReviewGrounding,
  ReviewTarget,
  foldReachesBody,
  reviewMarker,
  type ComposeRefusal,
  type ComposeRefusalReason,
  type ComposedReview,
  type DiffLinePair,
  type FoldReason,
  type FoldedItem,
  type ForgeProvider,
  type ReviewComment,
  type ReviewDescriptor,
  type ReviewEvent,
  type ReviewFoldNote,
  type ReviewPlacement,
  type ReviewVerdict,
} from '../../protocol/exits';
import { filesOnSides, type FileChange, type FilesOnSides, type Patchset, type Side } from '../../protocol/patchset';
import { err, ok, type Result } from '../../protocol/result';
import { escapeControls } from '../../protocol/text';
import { canonicalJson } from '../capture/ids';

/**
 * The review composer: PURE (no I/O; `node:crypto` only hashes). The preview and the post both
 * call it on the same inputs, so what is previewed is what posts; `verifyComposition` is the
 * post-time rebuild.
 *
 * Outbound set: staged asks in lane `post-review`, and every bare line comment. Retired asks and
 * the other lanes never leave. Each outbound item is accounted for exactly once — as one comment
 * (its `placements` entry names it) or in `descriptor.folded` (ask id, or the line comment's
 * projection key).
 *
 * Placement. A span (a line anchor, or a finding's captured code_ref) becomes a comment when it is
 * on the active patchset and every line of it is a line the forge's diff shows, all inside one
 * hunk: head → RIGHT with new line numbers, base → LEFT with old numbers, the path always the
 * file's current path (a base-side span through a rename keeps its old-side numbers and LEFT).
 * The forge's diff shows 3 context lines (FORGE_DIFF_CONTEXT_LINES); a captured context line
 * counts only when it is within 3 lines of a change in its hunk, so a capture with more context
 * never offers a line the forge lacks, and one with less only folds what it cannot prove. A span
 * that cannot be placed folds WHOLE into the body, its full range named. LEFT takes deleted and
 * context lines alike (both are in the diff's old column, with old numbers): a base-side span is
 * never moved to RIGHT. The target's head and merge-base must be the patchset's head and base
 * ('target-mismatch'), since the numbers are placed on the captured diff.
 *
 * Comment order: path (code units), start line, end line, then ask ordinal (bare line comments
 * after asks), then side (LEFT first), then ask id / line-comment key.
 *
 * Superseded: a bare single-line comment placed on the exact (path, side, line) of a single-line
 * ask's comment is folded `superseded` — the ask wins, and the bare comment's text does not post
 * (the preview lists it with the winning ask).
 *
 * Verdict: any outbound request-change → REQUEST_CHANGES; else any outbound comment or question,
 * or any bare line comment that posts → COMMENT; else APPROVE. A verdict override wins. On the
 * reviewer's own request APPROVE and REQUEST_CHANGES become COMMENT (the forge refuses them from
 * the author); `verdict.notice` says so beside the descriptor.
 *
 * Body: [GitLab's verdict label] · opener (given, or the deterministic grounded one) · "Notes" (one
 * per folded item that reaches the body, in outbound order) · the marker as the last line. Reviewer
 * and model text is data: line breaks are normalized to LF, every `<!--` is written `<!\--` (so no
 * text can hide what follows it, reach the marker or pass for one), and a note or opener that
 * leaves a code fence open is closed after it. Nothing else in it is changed.
 *
 * Limits: a body or comment over the forge's limit is refused ('body-too-long' /
 * 'comment-too-long', naming the item and both sizes); nothing is cut.
 */

// ─── Input ───────────────────────────────────────────────────────────────────────────────────

export interface ComposeReviewInput {
  sessionId: string;
  /** The session's active patchset. */
  patchset: Patchset;
  projection: AskProjection;
  target: ReviewTarget;
  /** The reviewer opened this pull/merge request. */
  ownPullRequest: boolean;
  grounding: ReviewGrounding;
  /** A model-written opener; absent or blank → the deterministic one. */
  opener?: string;
  /**
   * A re-review at this head (host/rereview/run.ts): the body opens with this line ("Prior review:
   * k of n resolved"), and asks written on its fix delta's head side place as on the request's
   * own head (the same commit, so the same lines).
   */
  prior?: { line: string; headTwins: readonly string[] };
}

/** The canonical form the composition id hashes; its version moves when the layout rules change. */
export const COMPOSITION_SCHEME = 'rennet-review/1';

// ─── Forge lines ─────────────────────────────────────────────────────────────────────────────

/** A maximal run of consecutive lines on one side that one hunk of the forge's diff shows. */
export interface ForgeLineRun {
  side: Side;
  start: number;
  end: number;
  /** Line number on `side` → both numbers of that diff line. */
  lines: ReadonlyMap<number, DiffLinePair>;
}

/**
 * The lines of `file` on `side` the forge's diff shows, as runs inside one hunk each: the hunk's
 * changed lines on that side (add on head, del on base) and its context lines within
 * FORGE_DIFF_CONTEXT_LINES of a change. A context line further out (captured with more context)
 * ends a run: the forge splits its hunk there or does not show the line.
 */
export function forgeLineRuns(file: FileChange, side: Side): ForgeLineRun[] {
  if (file.binary || file.submodule) return [];
  const runs: ForgeLineRun[] = [];
  for (const hunk of file.hunks) {
    const n = hunk.lines.length;
    const distance = new Array<number>(n).fill(Number.POSITIVE_INFINITY);
    let last = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < n; i++) {
      if (hunk.lines[i]?.kind !== 'context') last = i;
      else distance[i] = i - last;
    }
    let next = Number.POSITIVE_INFINITY;
    for (let i = n - 1; i >= 0; i--) {
      if (hunk.lines[i]?.kind !== 'context') next = i;
      else distance[i] = Math.min(distance[i] ?? Number.POSITIVE_INFINITY, next - i);
    }
    let run: { start: number; end: number; lines: Map<number, DiffLinePair> } | null = null;
    const close = () => {
      if (run) runs.push({ side, ...run });
      run = null;
    };
    for (let i = 0; i < n; i++) {
      const line = hunk.lines[i];
      if (!line) continue;
      const number = side === 'head' ? line.newLine : line.oldLine;
      if (number === null) continue; // the other side's line: not on this side at all
      if (line.kind === 'context' && (distance[i] ?? Number.POSITIVE_INFINITY) > FORGE_DIFF_CONTEXT_LINES) {
        close();
        continue;
      }
      const pair = { oldLine: line.oldLine, newLine: line.newLine };
      if (run && number === run.end + 1) {
        run.end = number;
        run.lines.set(number, pair);
      } else {
        close();
        run = { start: number, end: number, lines: new Map([[number, pair]]) };
      }
    }
    close();
  }
  return runs;
}

// ─── Resolution of one outbound item ─────────────────────────────────────────────────────────

interface Placed {
  path: string;
  side: Side;
  start: number;
  end: number;
  startPair: DiffLinePair;
  endPair: DiffLinePair;
}

type Resolution = { placed: Placed } | { fold: FoldReason };

interface Outbound {
  /** Ask id or line-comment key. */
  ref: string;
  intent: AskIntent;
  /** A bare line comment (else a staged ask). */
  bare: boolean;
  /** Staging ordinal; bare line comments rank after every ask. */
  rank: number;
  text: string;
  /** The words the note and the preview use for its anchor; null: it has none (pathless). */
  where: string | null;
  resolution: Resolution;
}

class Resolver {
  private readonly files: FilesOnSides<FileChange>;
  private readonly runs = new Map<FileChange, Map<Side, ForgeLineRun[]>>();

  /** `headTwins`: patchsets with this one's head commit; a head-side span on one names the same lines. */
  constructor(
    private readonly patchset: Patchset,
    private readonly headTwins: ReadonlySet<string> = new Set(),
  ) {
    this.files = filesOnSides(patchset.files);
  }

  private runsOf(file: FileChange, side: Side): ForgeLineRun[] {
    let bySide = this.runs.get(file);
    if (!bySide) this.runs.set(file, (bySide = new Map<Side, ForgeLineRun[]>()));
    let runs = bySide.get(side);
    if (!runs) bySide.set(side, (runs = forgeLineRuns(file, side)));
    return runs;
  }

  resolve(span: CodeSpan): Resolution {
    if (span.patchsetId !== this.patchset.id && !(span.side === 'head' && this.headTwins.has(span.patchsetId))) return { fold: 'other-patchset' };
    const file = this.files.on(span.path, span.side);
    if (!file) return { fold: 'not-in-patchset' };
    if (file.binary || file.submodule) return { fold: 'binary-or-submodule' };
    const runs = this.runsOf(file, span.side);
    const home = runs.find((r) => r.start <= span.startLine && span.endLine <= r.end);
    if (home) {
      return {
        placed: {
          path: file.path,
          side: span.side,
          start: span.startLine,
          end: span.endLine,
          startPair: pairAt(home, span.startLine),
          endPair: pairAt(home, span.endLine),
        },
      };
    }
    const tail = file.truncation?.tailFrom[span.side] ?? null;
    if (file.truncated && tail !== null && span.endLine >= tail) return { fold: 'truncated' };
    if (runs.some((r) => r.start <= span.endLine && r.end >= span.startLine)) return { fold: 'range-across-hunks' };
    return { fold: 'outside-diff' };
  }
}

function pairAt(run: ForgeLineRun, line: number): DiffLinePair {
  const pair = run.lines.get(line);
  if (!pair) throw new Error(`compose: line ${line} missing from its run ${run.start}-${run.end}`);
  return pair;
}

// ─── Words ───────────────────────────────────────────────────────────────────────────────────

const INTENT_LABELS: Record<AskIntent, string> = {
  'request-change': 'Change requested',
  comment: 'Comment',
  question: 'Question',
  approval: 'Approval',
};

/** Why a note is in the body, after its anchor; '' when the anchor says it. */
const REASON_WORDS: Record<FoldReason, string> = {
  pathless: '',
  'board-prose': '',
  'finding-without-code': '',
  'other-patchset': 'from an earlier capture of this change, not re-read onto the current code',
  'not-in-patchset': 'not a file of this change on that side',
  'binary-or-submodule': 'binary or a submodule: the diff shows no lines',
  truncated: 'past what the capture holds of this file',
  'outside-diff': 'outside the lines the diff shows',
  'range-across-hunks': 'not inside one hunk of the diff',
  superseded: 'a staged ask on the same line takes it',
};

/** Inline code for any text: a backtick fence longer than any run inside, padded when needed. */
function code(text: string): string {
  const shown = defuse(escapeControls(text));
  let longest = 0;
  for (const run of shown.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  const fence = '`'.repeat(longest + 1);
  const pad = shown.startsWith('`') || shown.endsWith('`') || shown.startsWith(' ') || shown.endsWith(' ') ? ' ' : '';
  return `${fence}${pad}${shown}${pad}${fence}`;
}

function lineWords(start: number, end: number): string {
  return start === end ? `line ${start}` : `lines ${start}–${end}`;
}

function spanWords(span: CodeSpan, activePatchsetId: string): string {
  const capture = span.patchsetId === activePatchsetId ? '' : `, capture ${code(span.patchsetId)}`;
  return `${code(span.path)} ${lineWords(span.startLine, span.endLine)} (${span.side}${capture})`;
}

/** One line of board prose, whitespace collapsed, cut at REVIEW_NOTE_QUOTE_MAX_CHARS code points. */
function quoteExcerpt(quote: string): string {
  const points = Array.from(quote.replace(/\s+/g, ' ').trim());
  const cut = points.length > REVIEW_NOTE_QUOTE_MAX_CHARS;
  const shown = escapeControls(points.slice(0, REVIEW_NOTE_QUOTE_MAX_CHARS).join(''));
  return `“${defuse(shown)}${cut ? '…' : ''}”${cut ? ` (first ${REVIEW_NOTE_QUOTE_MAX_CHARS} of ${points.length} characters)` : ''}`;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

// ─── Text as data ────────────────────────────────────────────────────────────────────────────

/** Every `<!--` written `<!\--` (Markdown shows the same four characters; no HTML comment opens). */
function defuse(text: string): string {
  return text.replace(/<!--/g, '<!\\--');
}

/** Reviewer or model text as it posts: LF line breaks, no HTML comment opener. */
function asData(text: string): string {
  return defuse(text.replace(/\r\n?/g, '\n'));
}

/** An opening code fence (CommonMark): up to 3 spaces, then 3+ backticks or tildes. */
const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})(.*)$/;

/** `text` with a closing fence appended when it leaves a code fence open, so it cannot swallow what follows. */
export function closeFences(text: string): string {
  let open: string | null = null;
  for (const line of text.split('\n')) {
    const match = FENCE_OPEN.exec(line);
    if (!match) continue;
    const fence = match[1] ?? '';
    const rest = match[2] ?? '';
    if (open === null) {
      // A backtick fence's info string may not hold a backtick (else it is inline code).
      if (!(fence.startsWith('`') && rest.includes('`'))) open = fence;
    } else if (fence.charAt(0) === open.charAt(0) && fence.length >= open.length && rest.trim() === '') {
      open = null;
    }
  }
  return open === null ? text : `${text}\n${open}`;
}

/** Body text from reviewer or model: as data, fences closed, outer blank lines dropped. */
function bodyBlock(text: string): string {
  return closeFences(
    asData(text)
      .replace(/^\s*\n/, '')
      .replace(/\s+$/, ''),
  );
}

// ─── Opener ──────────────────────────────────────────────────────────────────────────────────

function lensWords(lens: ReviewGrounding['lenses'][number], findings: ReviewGrounding['findings']): string {
  const title = LENS_TITLES[lens.lens];
  if (lens.state !== 'settled') return `${title} ${lens.state}`;
  if (lens.lens === 'flagged') return `${title} ${plural(lens.findings, 'finding')} (${findings.open} open, ${findings.dismissed} dismissed)`;
  // Noise's board is its groups of skippable hunks (it writes no sections).
  if (lens.lens === 'noise') return `${title} ${plural(lens.groups, 'group')}`;
  return `${title} ${plural(lens.sections, 'section')}`;
}

/** The deterministic opener: what was reviewed and what the boards came to. */
export function groundedOpener(patchset: Patchset, grounding: ReviewGrounding, comments: number, notes: number): string {
  const t = patchset.totals;
  const lines = [`Reviewed ${code(patchset.head.slice(0, 12))}: ${plural(t.files, 'file')}, +${t.additions} −${t.deletions}.`];
  const lenses = [...grounding.lenses].sort((a, b) => LENSES.indexOf(a.lens) - LENSES.indexOf(b.lens));
  if (lenses.length > 0) lines.push(`Lens boards: ${lenses.map((l) => lensWords(l, grounding.findings)).join(' · ')}.`);
  const attached = [comments > 0 ? plural(comments, 'line comment') : '', notes > 0 ? `${plural(notes, 'note')} below` : ''].filter(Boolean);
  if (attached.length > 0) lines.push(`${attached.join('; ')}.`);
  return lines.join('\n\n');
}

// ─── Verdict ─────────────────────────────────────────────────────────────────────────────────

const OVERRIDE_EVENTS = { approve: 'APPROVE', 'request-changes': 'REQUEST_CHANGES', comment: 'COMMENT' } as const satisfies Record<string, ReviewEvent>;

function verdictOf(outbound: readonly Outbound[], override: AskProjection['verdictOverride'], ownPullRequest: boolean, provider: ForgeProvider): ReviewVerdict {
  const posted = outbound.filter((o) => !('fold' in o.resolution) || foldReachesBody(o.resolution.fold));
  const derived: ReviewEvent = posted.some((o) => o.intent === 'request-change') ? 'REQUEST_CHANGES' : posted.some((o) => o.intent === 'comment' || o.intent === 'question') ? 'COMMENT' : 'APPROVE';
  const wanted = override ? OVERRIDE_EVENTS[override] : derived;
  if (!ownPullRequest || wanted === 'COMMENT') return { derived, override, event: wanted, downgradedFrom: null, notice: null };
  const request = provider === 'github' ? 'pull request' : 'merge request';
  const forge = provider === 'github' ? 'GitHub' : 'GitLab';
  const act = wanted === 'APPROVE' ? 'approve it' : 'request changes on it';
  return {
    derived,
    override,
    event: 'COMMENT',
    downgradedFrom: wanted,
    notice: `This is your own ${request}: ${forge} does not let its author ${act}, so the review posts as a comment.`,
  };
}

// ─── Composition ─────────────────────────────────────────────────────────────────────────────

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function refusal(reason: ComposeRefusalReason, message: string, detail?: Record<string, string>): ComposeRefusal {
  return detail ? { reason, message, detail } : { reason, message };
}

function outboundOf(input: ComposeReviewInput, resolver: Resolver): Outbound[] {
  const active = input.patchset.id;
  const asks = input.projection.asks.filter((a) => a.state === 'staged' && a.lane === 'post-review').sort((a, b) => a.ordinal - b.ordinal || compare(a.id, b.id));
  const fromAsk = (ask: Ask): Outbound => {
    const base = { ref: ask.id, intent: ask.intent, bare: false, rank: ask.ordinal, text: ask.text };
    const a = ask.anchor;
    switch (a.kind) {
      case 'none':
        return { ...base, where: null, resolution: { fold: 'pathless' } };
      case 'quote':
        return { ...base, where: `on the ${LENS_TITLES[a.lens]} board, ${quoteExcerpt(a.quote)}`, resolution: { fold: 'board-prose' } };
      case 'finding':
        return a.codeRef
          ? { ...base, where: `${spanWords(a.codeRef, active)}, a Flagged finding`, resolution: resolver.resolve(a.codeRef) }
          : { ...base, where: `a Flagged finding (${code(a.findingId)}) that cites no code`, resolution: { fold: 'finding-without-code' } };
      case 'line':
        return { ...base, where: spanWords(a, active), resolution: resolver.resolve(a) };
    }
  };
  const fromLineComment = ([key, comment]: [string, LineComment]): Outbound => ({
    ref: key,
    intent: 'comment',
    bare: true,
    rank: Number.POSITIVE_INFINITY,
    text: comment.text,
    where: spanWords(comment.anchor, active),
    resolution: resolver.resolve(comment.anchor),
  });
  const lineComments = Object.entries(input.projection.lineComments).sort((a, b) => compare(a[0], b[0]));
  return [...asks.map(fromAsk), ...lineComments.map(fromLineComment)];
}

/** Folds bare single-line comments that sit on a single-line ask's comment; returns ref → winning ask. */
function supersede(outbound: Outbound[]): Map<string, string> {
  const lineKey = (p: Placed) => `${p.path}\0${p.side}\0${p.start}`;
  const askAt = new Map<string, string>();
  for (const o of outbound) {
    if (o.bare || !('placed' in o.resolution)) continue;
    const p = o.resolution.placed;
    if (p.start === p.end && !askAt.has(lineKey(p))) askAt.set(lineKey(p), o.ref);
  }
  const winners = new Map<string, string>();
  for (const o of outbound) {
    if (!o.bare || !('placed' in o.resolution)) continue;
    const p = o.resolution.placed;
    const winner = p.start === p.end ? askAt.get(lineKey(p)) : undefined;
    if (winner === undefined) continue;
    winners.set(o.ref, winner);
    o.resolution = { fold: 'superseded' };
  }
  return winners;
}

function commentOf(p: Placed, body: string): ReviewComment {
  const side = p.side === 'head' ? 'RIGHT' : 'LEFT';
  return p.start === p.end ? { path: p.path, line: p.end, side, body } : { path: p.path, line: p.end, side, startLine: p.start, startSide: side, body };
}

/** The composition id: SHA-256 over the canonical JSON of everything that posts and where. */
export function compositionIdOf(parts: { sessionId: string; patchsetId: string; target: ReviewTarget; event: ReviewEvent; bodyWithoutMarker: string; comments: readonly ReviewComment[] }): string {
  const canonical = canonicalJson({
    scheme: COMPOSITION_SCHEME,
    sessionId: parts.sessionId,
    patchsetId: parts.patchsetId,
    target: parts.target,
    event: parts.event,
    body: parts.bodyWithoutMarker,
    comments: parts.comments,
  });
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}

/** Composes the review from the projection; the same input always gives the same composition. */
export function composeReview(input: ComposeReviewInput): Result<ComposedReview, ComposeRefusal> {
  const session = AskKeyPart.safeParse(input.sessionId);
  if (!session.success) return err(refusal('invalid-input', `not a session id: ${session.error.issues[0]?.message ?? 'invalid'}`));
  const target = ReviewTarget.safeParse(input.target);
  if (!target.success) return err(refusal('invalid-input', `not a review target: ${target.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`));
  const grounding = ReviewGrounding.safeParse(input.grounding);
  if (!grounding.success) return err(refusal('invalid-input', `not review grounding: ${grounding.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`));
  if (input.opener !== undefined && typeof input.opener !== 'string') return err(refusal('invalid-input', 'the opener is not text'));

  const { patchset, projection } = input;
  const t = target.data;
  if (t.headSha !== patchset.head) {
    return err(
      refusal('target-mismatch', `the ${t.provider} request's head ${t.headSha.slice(0, 12)} is not the reviewed head ${patchset.head.slice(0, 12)}`, {
        targetHead: t.headSha,
        patchsetHead: patchset.head,
      }),
    );
  }
  if (t.baseSha !== patchset.base) {
    return err(
      refusal('target-mismatch', `the ${t.provider} request's diff starts at ${t.baseSha.slice(0, 12)}, the reviewed diff at ${patchset.base.slice(0, 12)}`, {
        targetBase: t.baseSha,
        patchsetBase: patchset.base,
      }),
    );
  }

  const outbound = outboundOf(input, new Resolver(patchset, new Set(input.prior?.headTwins ?? [])));
  const winners = supersede(outbound);

  // Comments, in their posting order.
  const placedItems = outbound
    .flatMap((o) => ('placed' in o.resolution ? [{ o, p: o.resolution.placed }] : []))
    .sort(
      (a, b) =>
        compare(a.p.path, b.p.path) ||
        a.p.start - b.p.start ||
        a.p.end - b.p.end ||
        (a.o.rank === b.o.rank ? 0 : a.o.rank < b.o.rank ? -1 : 1) ||
        compare(a.p.side === 'base' ? 'L' : 'R', b.p.side === 'base' ? 'L' : 'R') ||
        compare(a.o.ref, b.o.ref),
    );
  const limits = FORGE_TEXT_LIMITS[t.provider];
  const comments: ReviewComment[] = [];
  const placements: ReviewPlacement[] = [];
  for (const { o, p } of placedItems) {
    const body = asData(o.text);
    if (body.length > limits.commentMaxChars) {
      return err(
        refusal('comment-too-long', `the comment from ${o.ref} is ${body.length} characters; ${t.provider} takes at most ${limits.commentMaxChars}`, {
          ref: o.ref,
          chars: String(body.length),
          limit: String(limits.commentMaxChars),
        }),
      );
    }
    comments.push(commentOf(p, body));
    placements.push({ ref: o.ref, intent: o.intent, start: p.startPair, end: p.endPair });
  }

  // The ledger of what folded, in outbound order.
  const foldedItems = outbound.flatMap((o) => ('fold' in o.resolution ? [{ o, reason: o.resolution.fold }] : []));
  const folded: FoldedItem[] = foldedItems.map(({ o, reason }) => ({ ask: o.ref, reason }));
  const foldNotes: ReviewFoldNote[] = foldedItems.map(({ o, reason }) => ({
    ref: o.ref,
    reason,
    intent: o.intent,
    where: o.where ?? 'no anchor',
    inBody: foldReachesBody(reason),
    supersededBy: winners.get(o.ref) ?? null,
  }));

  const verdict = verdictOf(outbound, projection.verdictOverride, input.ownPullRequest, t.provider);

  // The body.
  const notes = foldedItems
    .filter(({ reason }) => foldReachesBody(reason))
    .map(({ o, reason }) => {
      const why = REASON_WORDS[reason];
      const where = o.where === null ? '' : ` · ${o.where}${why ? ` — ${why}` : ''}`;
      return `**${INTENT_LABELS[o.intent]}**${where}\n\n${bodyBlock(o.text)}`;
    });
  const given = input.opener !== undefined && input.opener.trim().length > 0 ? bodyBlock(input.opener) : null;
  const opener = given ?? groundedOpener(patchset, grounding.data, comments.length, notes.length);
  const parts = [
    ...(input.prior ? [asData(input.prior.line.replace(/\s+/g, ' ').trim())] : []),
    ...(t.provider === 'gitlab' ? [GITLAB_VERDICT_LABELS[verdict.event]] : []),
    opener,
    ...(notes.length > 0 ? ['### Notes', ...notes] : []),
  ];
  const bodyWithoutMarker = parts.join('\n\n');

  const compositionId = compositionIdOf({ sessionId: session.data, patchsetId: patchset.id, target: t, event: verdict.event, bodyWithoutMarker, comments });
  const markerId = compositionId.slice(0, REVIEW_MARKER_ID_HEX_LENGTH);
  const body = `${bodyWithoutMarker}\n\n${reviewMarker(markerId)}`;
  if (body.length > limits.bodyMaxChars) {
    return err(
      refusal('body-too-long', `the review body is ${body.length} characters; ${t.provider} takes at most ${limits.bodyMaxChars} (${plural(notes.length, 'note')} fold into it)`, {
        chars: String(body.length),
        limit: String(limits.bodyMaxChars),
      }),
    );
  }

  const descriptor: ReviewDescriptor = {
    compositionId,
    provider: t.provider,
    target: { owner: t.owner, repo: t.repo, number: t.number, headSha: t.headSha },
    event: verdict.event,
    body,
    comments,
    folded,
  };
  return ok({ descriptor, markerId, verdict, placements, foldNotes });
}

/**
 * The post-time rebuild: composes again from the current inputs and refuses ('stale-composition')
 * unless the composition id is the one previewed. A refusal of the rebuild itself passes through.
 */
export function verifyComposition(input: ComposeReviewInput, expectedId: string): Result<ComposedReview, ComposeRefusal> {
  const rebuilt = composeReview(input);
  if (!rebuilt.ok) return rebuilt;
  const actual = rebuilt.value.descriptor.compositionId;
  if (actual !== expectedId) {
    return err(
      refusal('stale-composition', 'the review changed since it was previewed (asks, verdict, patchset, target or opener); preview it again before posting', {
        expected: expectedId,
        actual,
      }),
    );
  }
  return rebuilt;
}

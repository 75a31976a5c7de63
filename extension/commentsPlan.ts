/**
 * What the editor's comment threads offer and show, decided without VS Code: which documents are
 * captured text of the active review, which of their lines take an ask, which staged asks and
 * Flagged findings sit on them, and the words and context values the threads carry. Pure (no
 * `vscode` import): `comments.ts` maps these answers onto a CommentController, and
 * test/unit/extension/commentsPlan.test.ts tests them against captured patchsets.
 */
import { md, mdModel, ui, uiJoin, uiText, type Md, type UiText } from './uiText';
import {
  ASK_TEXT_MAX_BYTES,
  findingKey,
  flaggedBoardId,
  utf8Length,
  type AskCommand,
  type AskIntent,
  type AskLane,
  type AskProjection,
  type CodeSpan,
  type FindingAnchor,
  type LineAnchor,
  type QuoteAnchor,
} from '../protocol/asks';
import { accordWord, type Accord, type ElementOf, type Severity } from '../protocol/board';
import { filesOnSides, hasSide, type FileChange, type FilesOnSides, type Patchset, type Side } from '../protocol/patchset';
import type { GenerationSnapshot } from '../protocol/review';
import type { TextDocumentRef } from './documentRefs';

/** A 1-based inclusive line span. */
export interface LineSpan {
  startLine: number;
  endLine: number;
}

/** Either outcome of a plan step: the value, or the sentence that says why not. */
export type Planned<T> = { ok: true; value: T } | { ok: false; reason: string };

// ─── Documents ───────────────────────────────────────────────────────────────────────────────

/** A document resolved to one side of one changed file of one capture. */
export interface ShownDocument {
  patchsetId: string;
  side: Side;
  file: FileChange;
  via: TextDocumentRef['kind'];
  /** The capture's files by the names they have on each side: which file a span's path names. */
  named: FilesOnSides<FileChange>;
}

/**
 * Resolves a document against the captures it may show. A checkout file is the head side of the
 * active capture's file at that path; a deleted file has no head, so the checkout never shows it
 * (its text is the base blob). A blob document names its capture; `patchsetOf` answers the ones
 * that are loaded (undefined: not loaded, or unknown).
 */
export function resolveDocument(ref: TextDocumentRef, active: Patchset | null, patchsetOf: (id: string) => Patchset | undefined): Planned<ShownDocument> {
  if (ref.kind === 'workspace') {
    if (!active) return { ok: false, reason: 'this review has no capture to compare with' };
    const named = filesOnSides(active.files);
    const file = named.on(ref.path, 'head');
    if (!file) {
      const deleted = named.on(ref.path, 'base')?.status === 'deleted';
      return { ok: false, reason: deleted ? `${ref.path} is deleted by this change; its text is the captured base` : `${ref.path} is not changed by this review` };
    }
    return { ok: true, value: { patchsetId: active.id, side: 'head', file, via: 'workspace', named } };
  }
  const patchset = active?.id === ref.patchsetId ? active : patchsetOf(ref.patchsetId);
  if (!patchset) return { ok: false, reason: `capture ${ref.patchsetId} is not loaded` };
  const named = filesOnSides(patchset.files);
  // A side the file does not have (an added file's base, a deleted file's head) still shows that
  // file, with no lines of its own: nothing is drawn and no ask is taken there.
  const lacking = named.on(ref.path, ref.side === 'base' ? 'head' : 'base');
  const file = named.on(ref.path, ref.side) ?? (lacking && !hasSide(lacking, ref.side) ? lacking : undefined);
  if (!file) return { ok: false, reason: `${ref.path} is not a file of capture ${ref.patchsetId}` };
  return { ok: true, value: { patchsetId: patchset.id, side: ref.side, file, via: 'blob', named } };
}

/**
 * Whether a captured span (an ask's line anchor, a finding's code_ref) is on this document: same
 * capture and side, and its path names the shown file on that side (a rename's base by either name).
 */
export function spanIsOn(span: Pick<CodeSpan, 'patchsetId' | 'path' | 'side'>, shown: ShownDocument): boolean {
  if (span.patchsetId !== shown.patchsetId || span.side !== shown.side) return false;
  return shown.named.on(span.path, span.side) === shown.file;
}

// ─── Commenting ranges ───────────────────────────────────────────────────────────────────────

/** Spans sorted by start, overlapping or adjacent ones merged (2–5 and 6–9 are 2–9). */
export function mergeSpans(spans: readonly LineSpan[]): LineSpan[] {
  const sorted = [...spans].filter((s) => s.startLine <= s.endLine).sort((a, b) => a.startLine - b.startLine || a.endLine - b.endLine);
  const merged: LineSpan[] = [];
  for (const span of sorted) {
    const last = merged[merged.length - 1];
    if (last && span.startLine <= last.endLine + 1) last.endLine = Math.max(last.endLine, span.endLine);
    else merged.push({ startLine: span.startLine, endLine: span.endLine });
  }
  return merged;
}

/**
 * The lines of a document that take an ask: the changed regions of its side of the active capture
 * (the hunks as captured, merged). A document of an earlier capture takes none: asks anchor on the
 * capture under review.
 */
export function commentingSpans(shown: ShownDocument, activePatchsetId: string | null): LineSpan[] {
  if (shown.patchsetId !== activePatchsetId || shown.file.binary || shown.file.submodule) return [];
  return mergeSpans(shown.file.regions.filter((r) => r.side === shown.side));
}

/** "5", "2–13", "2–13, 17–32": spans as a reader names them. */
export function describeSpans(spans: readonly LineSpan[], max = 6): string {
  const words = spans.slice(0, max).map((s) => (s.startLine === s.endLine ? `${s.startLine}` : `${s.startLine}–${s.endLine}`));
  return spans.length > max ? `${words.join(', ')} and ${spans.length - max} more` : words.join(', ');
}

/** The parts of `lines` that no span covers. */
export function uncoveredSpans(lines: LineSpan, spans: readonly LineSpan[]): LineSpan[] {
  const gaps: LineSpan[] = [];
  let next = lines.startLine;
  for (const span of mergeSpans(spans)) {
    if (span.endLine < next) continue;
    if (span.startLine > lines.endLine) break;
    if (span.startLine > next) gaps.push({ startLine: next, endLine: span.startLine - 1 });
    next = span.endLine + 1;
    if (next > lines.endLine) break;
  }
  if (next <= lines.endLine) gaps.push({ startLine: next, endLine: lines.endLine });
  return gaps;
}

/**
 * The 1-based lines an editor range covers (0-based positions, as VS Code ranges hold them), taken
 * literally: the thread widget sits under the range's last line, so that line is part of the ask.
 */
export function linesOfRange(range: { start: { line: number }; end: { line: number } }): LineSpan {
  return { startLine: range.start.line + 1, endLine: range.end.line + 1 };
}

// ─── Staging ─────────────────────────────────────────────────────────────────────────────────

export interface LineStageRequest {
  shown: ShownDocument;
  activePatchsetId: string | null;
  lines: LineSpan;
  text: string;
  /** The exit lane the ask joins (protocol/session.ts askLaneFor). */
  lane: AskLane;
}

function sideWord(side: Side): string {
  return side === 'head' ? 'new' : 'old';
}

/**
 * The stage command for an ask written on lines of a document, or why it cannot be staged: empty
 * or oversized text, a document of an earlier capture, or lines outside the change's hunks (every
 * line of the range must be one the capture shows as changed).
 */
export function planLineStage(request: LineStageRequest): Planned<Extract<AskCommand, { type: 'stage' }>> {
  const { shown, lines, text } = request;
  const path = shown.file.path;
  if (text.trim().length === 0) return { ok: false, reason: 'An ask needs text: write what should change or what you want to know, then stage it.' };
  if (utf8Length(text) > ASK_TEXT_MAX_BYTES) return { ok: false, reason: `The ask is longer than ${ASK_TEXT_MAX_BYTES / 1024} KiB; shorten it and stage it again.` };
  if (shown.patchsetId !== request.activePatchsetId) {
    return { ok: false, reason: `This document shows an earlier capture (${shown.patchsetId}); asks go on the capture under review.` };
  }
  if (lines.startLine < 1 || lines.endLine < lines.startLine) return { ok: false, reason: `Lines ${lines.startLine}–${lines.endLine} are not a range of ${path}.` };
  const spans = commentingSpans(shown, request.activePatchsetId);
  const where = `${path} (${sideWord(shown.side)} side)`;
  if (spans.length === 0) return { ok: false, reason: `${where} has no changed lines in this review, so it takes no line asks.` };
  const gaps = uncoveredSpans(lines, spans);
  if (gaps.length > 0) {
    const asked = lines.startLine === lines.endLine ? `Line ${lines.startLine}` : `Lines ${lines.startLine}–${lines.endLine}`;
    const outside = lines.startLine === lines.endLine ? 'is' : `include ${describeSpans(gaps)}, which ${gaps.length === 1 && gaps[0]!.startLine === gaps[0]!.endLine ? 'is' : 'are'}`;
    return { ok: false, reason: `${asked} of ${where} ${outside} outside the change's hunks; asks go on changed lines only (here: ${describeSpans(spans)}). Nothing was staged.` };
  }
  const anchor: LineAnchor = { kind: 'line', patchsetId: shown.patchsetId, path, side: shown.side, startLine: lines.startLine, endLine: lines.endLine };
  return { ok: true, value: { type: 'stage', anchor, text, intent: 'comment', lane: request.lane } };
}

// ─── Staged asks on a document ───────────────────────────────────────────────────────────────

/** A staged ask drawn on a document: line asks, and finding asks that carry their code_ref. */
export interface AskPlacement {
  askId: string;
  intent: AskIntent;
  text: string;
  span: LineSpan;
  anchorKind: 'line' | 'finding';
  /** When it was written or last edited (ISO). */
  at: string;
}

/** The captured span an ask is anchored on, when it has one. */
export function askSpan(anchor: AskProjection['asks'][number]['anchor']): CodeSpan | null {
  if (anchor.kind === 'line') return anchor;
  if (anchor.kind === 'finding') return anchor.codeRef ?? null;
  return null;
}

/** The staged asks that sit on this document, in staging order. */
export function asksOn(projection: AskProjection, shown: ShownDocument): AskPlacement[] {
  const placed: AskPlacement[] = [];
  for (const ask of projection.asks) {
    if (ask.state !== 'staged') continue;
    const span = askSpan(ask.anchor);
    if (!span || !spanIsOn(span, shown)) continue;
    placed.push({
      askId: ask.id,
      intent: ask.intent,
      text: ask.text,
      span: { startLine: span.startLine, endLine: span.endLine },
      anchorKind: ask.anchor.kind === 'line' ? 'line' : 'finding',
      at: ask.editedAt ?? ask.createdAt,
    });
  }
  return placed;
}

const INTENT_WORDS: Record<AskIntent, string> = {
  'request-change': 'request change',
  comment: 'comment',
  question: 'question',
  approval: 'approval',
};

export function intentWords(intent: AskIntent): string {
  return INTENT_WORDS[intent];
}

export function askThreadLabel(intent: AskIntent): UiText {
  return ui`Staged ask · ${INTENT_WORDS[intent]}`;
}

export function askAuthor(intent: AskIntent): UiText {
  return ui`You · ${INTENT_WORDS[intent]}`;
}

/** The comment's (and thread's) context value; package.json's menus read `ask-staged-<intent>`. */
export function askContextValue(intent: AskIntent): string {
  return `ask-staged-${intent}`;
}

// ─── Flagged findings ────────────────────────────────────────────────────────────────────────

type FindingElement = ElementOf<'finding'>;

/** A finding of the shown generation's Flagged board, with its first anchored code_ref. */
export interface FindingPlacement {
  sessionId: string;
  generationId: string;
  boardId: string;
  findingId: string;
  /** findingKey of (generation, board, finding): the disposition's key. */
  key: string;
  severity: Severity;
  category: string;
  title: string;
  bodyMarkdown: string;
  remedyMarkdown: string;
  author: string;
  status: FindingElement['status'];
  accord: Accord;
  concurrence: FindingElement['concurrence'];
  /** The first of its anchor ids that names a code_ref; null: none does (it is drawn nowhere). */
  codeRef: CodeSpan | null;
}

/** Every finding on the generation's Flagged board, in board order. */
export function flaggedFindings(generation: GenerationSnapshot): FindingPlacement[] {
  const board = generation.lanes.find((l) => l.lens === 'flagged')?.board;
  if (!board) return [];
  const codeRefs = new Map<string, ElementOf<'code_ref'>>();
  for (const element of board.elements) if (element.kind === 'code_ref') codeRefs.set(element.id, element);
  const boardId = flaggedBoardId(generation.sessionId, generation.generationId);
  const findings: FindingPlacement[] = [];
  for (const element of board.elements) {
    if (element.kind !== 'finding') continue;
    const ref = element.anchor.map((id) => codeRefs.get(id)).find((r) => r !== undefined && r.start_line <= r.end_line);
    findings.push({
      sessionId: generation.sessionId,
      generationId: generation.generationId,
      boardId,
      findingId: element.id,
      key: findingKey({ generationId: generation.generationId, boardId, findingId: element.id }),
      severity: element.severity,
      category: element.category,
      title: element.title,
      bodyMarkdown: element.body_markdown,
      remedyMarkdown: element.remedy_markdown,
      author: element.author,
      status: element.status,
      accord: element.accord,
      concurrence: element.concurrence,
      codeRef: ref ? { patchsetId: ref.patchset_id, path: ref.path, side: ref.side, startLine: ref.start_line, endLine: ref.end_line } : null,
    });
  }
  return findings;
}

export function findingsOn(findings: readonly FindingPlacement[], shown: ShownDocument): FindingPlacement[] {
  return findings.filter((f) => f.codeRef !== null && spanIsOn(f.codeRef, shown));
}

/** The reviewer's acts on a finding, from the ask projection. */
export interface FindingActs {
  dismissed: boolean;
  /** A staged request-change ask is anchored on it. */
  requestStaged: boolean;
}

function anchorsFinding(anchor: AskProjection['asks'][number]['anchor'], finding: Pick<FindingPlacement, 'generationId' | 'boardId' | 'findingId'>): boolean {
  return anchor.kind === 'finding' && anchor.generationId === finding.generationId && anchor.boardId === finding.boardId && anchor.findingId === finding.findingId;
}

export function findingActs(finding: FindingPlacement, projection: AskProjection | null): FindingActs {
  if (!projection) return { dismissed: false, requestStaged: false };
  return {
    dismissed: projection.findingDispositions[finding.key] === 'dismissed',
    requestStaged: projection.asks.some((a) => a.state === 'staged' && a.intent === 'request-change' && anchorsFinding(a.anchor, finding)),
  };
}

/** "concur (claude 1/1, codex 1/1)": the accord and, when known, the per-model tally. */
export function agreementWords(finding: Pick<FindingPlacement, 'accord' | 'concurrence'>): string {
  const tally = finding.concurrence.map((c) => `${c.model} ${c.agree}/${c.total}`).join(', ');
  const word = accordWord(finding.accord, finding.concurrence.length);
  return tally ? `${word} (${tally})` : word;
}

export function findingThreadLabel(finding: FindingPlacement, acts: FindingActs): UiText {
  const parts = [ui`Flagged · ${finding.severity}`, uiText(agreementWords(finding))];
  if (finding.status !== 'open') parts.push(uiText(finding.status));
  if (acts.requestStaged) parts.push(ui`change request staged`);
  if (acts.dismissed) parts.push(ui`dismissed by you`);
  return uiJoin(parts, ' · ');
}

/** The comment author line of a finding: the model that raised it. */
export function findingAuthor(finding: Pick<FindingPlacement, 'author'>): UiText {
  return ui`Flagged · ${finding.author}`;
}

/**
 * The thread's context value; package.json's menus match `^finding-open` (Request, Dismiss),
 * `^finding-dismissed` (Restore) and `^finding` (Discuss). A finding whose change request is
 * already staged is `finding-open-requested`: Request is not offered twice.
 */
export function findingContextValue(acts: FindingActs): string {
  if (acts.dismissed) return 'finding-dismissed';
  return acts.requestStaged ? 'finding-open-requested' : 'finding-open';
}

const SEVERITY_WORDS: Record<Severity, string> = { blocker: 'Blocker', major: 'Major', minor: 'Minor', nit: 'Nit' };

/**
 * The finding's comment: severity and category, the claim as escaped text, then its body and
 * remedy as the model wrote them, re-emitted as safe Markdown (uiText.ts `mdModel`).
 */
export function findingMarkdown(finding: FindingPlacement): Md {
  return md`**${SEVERITY_WORDS[finding.severity]}** · ${finding.category}

**${finding.title}**

${mdModel(finding.bodyMarkdown)}

*Proposed remedy:*

${mdModel(finding.remedyMarkdown)}`;
}

/** A staged ask's comment body: the reviewer's Markdown (it may quote model or repository text), made safe. */
export function askMarkdown(text: string): Md {
  return mdModel(text);
}

/** The stage command of Request Change on a finding: its claim and remedy as the ask's text. */
export function planFindingRequest(finding: FindingPlacement, lane: AskLane): Extract<AskCommand, { type: 'stage' }> {
  const anchor: FindingAnchor = {
    kind: 'finding',
    generationId: finding.generationId,
    boardId: finding.boardId,
    findingId: finding.findingId,
    ...(finding.codeRef ? { codeRef: finding.codeRef } : {}),
  };
  let text = `${finding.title}\n\n${finding.remedyMarkdown}`;
  if (utf8Length(text) > ASK_TEXT_MAX_BYTES) text = finding.title;
  return { type: 'stage', anchor, text, intent: 'request-change', lane };
}

// ─── Discuss ─────────────────────────────────────────────────────────────────────────────────

/**
 * The quote thread an editor Discuss on a finding continues: the attached thread on exactly
 * `anchor`, open or closed (the caller reopens a closed one). A detached thread (a round could not
 * place its quote on a later board) is on no passage any more, so Discuss opens a fresh thread
 * rather than reviving it.
 */
export function discussThreadOn(projection: AskProjection | null, anchor: QuoteAnchor): { threadId: string; open: boolean } | undefined {
  if (!projection) return undefined;
  for (const [threadId, t] of Object.entries(projection.quoteThreads)) {
    const a = t.anchor;
    if (!t.detached && a.generationId === anchor.generationId && a.lens === anchor.lens && a.elementId === anchor.elementId && a.quote === anchor.quote) return { threadId, open: t.open };
  }
  return undefined;
}

import * as vscode from 'vscode';
import type { Patchset } from '../protocol/patchset';
import { askLaneFor } from '../protocol/session';
import { err, errorMessage, ok, rennetError, type Result } from '../protocol/result';
import type { ReviewView } from './activeReview';
import type { CommentThreadView } from './api';
import type { CapturedHeads } from './capturedHeads';
import type { HeadReading } from './capturedHeadsPlan';
import * as plan from './commentsPlan';
import type { CommandFactory } from './ctx';
import { documentRef, isReviewDocumentScheme, type TextDocumentRef } from './documentRefs';
import { notify } from './ui';
import { ui, uiText } from './uiText';
import { AskComment, AskThreadActs, bodyText, stageAsk } from './askThreads';
import { FINDING_THREADS_SETTING, FindingComment, FindingThreadActs, findingThreadsOn, toggleFindingThreads, type FindingActsDeps } from './findingThreads';

/**
 * The one Rennet CommentController. Changed lines of the active review take asks (the native
 * comment box's "Stage Ask" button); staged asks and, when `rennet.editor.findingThreads` is on,
 * the shown generation's Flagged findings are drawn as threads on every open document showing
 * their captured lines. Threads are reconciled, never rebuilt: each is kept by (document, ask or
 * finding) and only changed ones are touched. Every act goes through AskClient; nothing here keeps
 * ask state of its own. What goes where is decided in commentsPlan.ts.
 */

/** Quiet time after typing before threads on checkout files are checked against the capture again. */
const TYPING_SETTLE_MS = 400;
/** A staged ask's placeholder thread is dropped after this long even if no document draws the ask. */
const PLACEHOLDER_GRACE_MS = 10_000;
/** Captures kept for blob documents of captures other than the active one. */
const EXTRA_PATCHSETS = 4;

type Subject = { kind: 'ask'; sessionId: string; placement: plan.AskPlacement } | { kind: 'finding'; finding: plan.FindingPlacement; acts: plan.FindingActs };

interface Drawn {
  thread: vscode.CommentThread;
  subject: Subject;
  span: plan.LineSpan;
  threadSignature: string;
  commentSignature: string;
}

/** What a document can take an ask on, or why it takes none. */
type StagingTarget = { ok: true; view: ReviewView; shown: plan.ShownDocument; activePatchsetId: string } | { ok: false; reason: string };

/**
 * Whether a checkout file takes asks and draws threads: only a file known to differ from its
 * captured head is refused (its line numbers would name other lines). A head that cannot be
 * compared whole (binary, truncated, unreadable) leaves the file trusted.
 */
function checkoutReadsAsCaptured(reading: HeadReading): boolean {
  return reading.kind !== 'changed';
}

function isCommentReply(value: unknown): value is vscode.CommentReply {
  return typeof value === 'object' && value !== null && 'thread' in value && 'text' in value && typeof (value as { text: unknown }).text === 'string';
}

/** What the controller uses: the finding acts' (findingThreads.ts) and the captured heads. */
export interface CommentsDeps extends FindingActsDeps {
  heads: CapturedHeads;
}

export class ReviewComments implements vscode.Disposable {
  private readonly controller: vscode.CommentController;
  /** document uri → thread key (`ask:<id>` / `finding:<findingKey>`) → the thread drawn. */
  private readonly drawn = new Map<string, Map<string, Drawn>>();
  /** `${uri}|ask:<id>` → the reply thread the ask was written in, until the ask is drawn there. */
  private readonly placeholders = new Map<string, vscode.CommentThread>();
  /** Captures other than the active one that blob documents show, loaded on demand. */
  private readonly extraPatchsets = new Map<string, Patchset | null>();
  private readonly rangeProvider: vscode.CommentingRangeProvider;
  /** What the commenting ranges were last computed for; a change makes VS Code ask again. */
  private rangesKey = '';
  private typingTimer: ReturnType<typeof setTimeout> | undefined;
  private disposed = false;
  private readonly disposables: vscode.Disposable[] = [];

  /** The commands this controller answers (main.ts registers them with the rest). */
  readonly commands: Record<string, CommandFactory>;
  private readonly askActs: AskThreadActs;
  private readonly findingActs: FindingThreadActs;

  constructor(private readonly deps: CommentsDeps) {
    this.controller = vscode.comments.createCommentController('rennet', 'Rennet');
    this.controller.options = {
      prompt: 'Stage an ask on these changed lines',
      placeHolder: 'What should change here, or what do you want to know?',
    };
    this.rangeProvider = { provideCommentingRanges: (document) => this.commentingRanges(document) };
    this.controller.commentingRangeProvider = this.rangeProvider;
    this.disposables.push(
      this.controller,
      // A checkout file started or stopped reading as its capture: its ranges and threads follow.
      deps.heads.onDidChangeReading(() => {
        this.refreshCommentingRanges(true);
        this.reconcile();
      }),
      deps.review.onDidChange(() => {
        this.refreshCommentingRanges(false);
        this.reconcile();
      }),
      vscode.workspace.onDidOpenTextDocument(() => this.reconcile()),
      vscode.workspace.onDidCloseTextDocument(() => this.reconcile()),
      vscode.window.onDidChangeVisibleTextEditors(() => this.reconcile()),
      vscode.workspace.onDidChangeTextDocument(({ document }) => {
        // Only a checkout file can stop (or start again) reading as its capture.
        if (document.uri.scheme !== 'file' || !this.deps.review.current) return;
        clearTimeout(this.typingTimer);
        this.typingTimer = setTimeout(() => this.reconcile(), TYPING_SETTLE_MS);
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration(`rennet.editor.${FINDING_THREADS_SETTING}`)) this.reconcile();
      }),
    );

    this.askActs = new AskThreadActs(
      deps.asks,
      (comment) => this.drawn.get(comment.uri)?.get(`ask:${comment.askId}`),
      () => this.reconcile(),
    );
    this.findingActs = new FindingThreadActs(deps, (arg) => this.findingOf(arg));
    const command =
      (run: (arg: unknown) => Promise<unknown>): CommandFactory =>
      () =>
      (arg?: unknown) =>
        run(arg);
    this.commands = {
      'rennet.comment.stage': command((arg) => (isCommentReply(arg) ? this.stageReply(arg) : Promise.resolve(undefined))),
      'rennet.comment.requestChange': command((arg) => this.askActs.setIntent(arg, 'request-change')),
      'rennet.comment.question': command((arg) => this.askActs.setIntent(arg, 'question')),
      'rennet.comment.asComment': command((arg) => this.askActs.setIntent(arg, 'comment')),
      'rennet.comment.edit': command(async (arg) => this.askActs.beginEdit(arg)),
      'rennet.comment.saveEdit': command((arg) => this.askActs.saveEdit(arg)),
      'rennet.comment.cancelEdit': command(async (arg) => this.askActs.cancelEdit(arg)),
      'rennet.comment.unstage': command((arg) => this.askActs.unstage(arg)),
      'rennet.finding.request': command((arg) => this.findingActs.requestFinding(arg)),
      'rennet.finding.dismiss': command((arg) => this.findingActs.decideFinding(arg, 'dismissFinding')),
      'rennet.finding.restore': command((arg) => this.findingActs.decideFinding(arg, 'restoreFinding')),
      'rennet.finding.discuss': command((arg) => this.findingActs.discussFinding(arg)),
      'rennet.undoAsk': command(() => this.undoCommand()),
      'rennet.toggleFindingThreads': command(() => toggleFindingThreads()),
    };
    this.reconcile();
  }

  // ─── Test API ──────────────────────────────────────────────────────────────────────────────

  /** The threads drawn on a document, by start line. */
  threadsOn(uri: string): CommentThreadView[] {
    const drawn = this.drawn.get(vscode.Uri.parse(uri).toString());
    if (!drawn) return [];
    return [...drawn.values()]
      .sort((a, b) => a.span.startLine - b.span.startLine || a.span.endLine - b.span.endLine)
      .map((d) => ({
        label: d.thread.label,
        contextValue: d.thread.contextValue,
        startLine: d.span.startLine,
        endLine: d.span.endLine,
        bodies: d.thread.comments.map((c) => bodyText(c.body)),
      }));
  }

  /**
   * Stage an ask on lines of a document exactly as the comment box does: a reply thread on the
   * range, then the "Stage Ask" handler. A refused ask's thread is removed (no one is typing in it).
   */
  async stageLines(uri: string, startLine: number, endLine: number, text: string): Promise<Result<{ sessionId: string; askId: string }>> {
    if (!Number.isInteger(startLine) || !Number.isInteger(endLine) || startLine < 1 || endLine < startLine) {
      return err(rennetError('invalid-request', `Lines ${startLine}–${endLine} are not a range.`));
    }
    const thread = this.controller.createCommentThread(vscode.Uri.parse(uri), new vscode.Range(startLine - 1, 0, endLine - 1, 0), []);
    thread.collapsibleState = vscode.CommentThreadCollapsibleState.Collapsed;
    const result = await this.stageReply({ thread, text });
    if (!result.ok) thread.dispose();
    return result;
  }

  /** Undo this window's last act in a session (the active review's when none is named). */
  async undo(sessionId?: string): Promise<Result<{ label: string }>> {
    const id = sessionId ?? this.deps.review.current?.sessionId;
    if (!id) return err(rennetError('not-found', 'No Rennet review is active: open a review’s board first.'));
    const result = await this.deps.asks.undoLast(id);
    return result.ok ? ok({ label: result.value.label }) : result;
  }

  dispose(): void {
    this.disposed = true;
    clearTimeout(this.typingTimer);
    for (const placeholder of this.placeholders.values()) placeholder.dispose();
    this.placeholders.clear();
    for (const drawn of this.drawn.values()) for (const d of drawn.values()) d.thread.dispose();
    this.drawn.clear();
    for (const d of this.disposables.splice(0)) d.dispose();
  }

  // ─── Staging ───────────────────────────────────────────────────────────────────────────────

  /** The "Stage Ask" button of an empty thread (and `stageLines`): one stage command, or a stated refusal. */
  async stageReply(reply: vscode.CommentReply): Promise<Result<{ sessionId: string; askId: string }>> {
    const refuse = (message: string): Result<never> => {
      void notify('warning', uiText(message));
      return err(rennetError('invalid-request', message));
    };
    const range = reply.thread.range as vscode.Range | undefined;
    if (!range) return refuse('Rennet stages asks on lines: select the changed lines the ask is about.');
    if (reply.text.trim().length === 0) return refuse('An ask needs text: write what should change or what you want to know, then stage it.');
    let document: vscode.TextDocument;
    try {
      document = await vscode.workspace.openTextDocument(reply.thread.uri);
    } catch (error) {
      return refuse(`Rennet did not stage the ask: ${reply.thread.uri.toString()} could not be opened (${errorMessage(error)}).`);
    }
    const target = await this.stagingTarget(document);
    if (!target.ok) return refuse(`Rennet did not stage the ask: ${target.reason}.`);
    const planned = plan.planLineStage({
      shown: target.shown,
      activePatchsetId: target.activePatchsetId,
      lines: plan.linesOfRange(range),
      text: reply.text,
      lane: askLaneFor(target.view.session),
    });
    if (!planned.ok) return refuse(planned.reason);
    const staged = await stageAsk(this.deps.asks, target.view.sessionId, planned.value);
    if (!staged.ok) return staged;
    // The reply thread gives way to the ask's own thread once that is drawn on this document.
    const key = `${document.uri.toString()}|ask:${staged.value}`;
    this.placeholders.set(key, reply.thread);
    this.reconcile();
    const stale = this.placeholders.get(key);
    if (stale) {
      setTimeout(() => {
        if (this.placeholders.get(key) === stale) {
          this.placeholders.delete(key);
          stale.dispose();
        }
      }, PLACEHOLDER_GRACE_MS);
    }
    return ok({ sessionId: target.view.sessionId, askId: staged.value });
  }

  /** Where a document stands for staging: resolved against the active capture (read if need be). */
  private async stagingTarget(document: vscode.TextDocument): Promise<StagingTarget> {
    const view = this.deps.review.current;
    if (!view) return { ok: false, reason: 'no Rennet review is active (open a review’s board first)' };
    const activePatchsetId = view.session.session.activePatchsetId;
    if (!activePatchsetId) return { ok: false, reason: 'this review has no capture yet' };
    const active = view.patchset?.id === activePatchsetId ? view.patchset : await this.deps.review.patchset(activePatchsetId);
    if (!active) return { ok: false, reason: 'the capture under review could not be read (see the Rennet output)' };
    const ref = this.documentRef(document.uri, view);
    if (!ref) return { ok: false, reason: `${vscode.workspace.asRelativePath(document.uri)} is not part of this review (${view.session.session.repoRoot})` };
    if (ref.kind === 'blob' && ref.patchsetId !== activePatchsetId) {
      return { ok: false, reason: `this document shows an earlier capture (${ref.patchsetId}); asks go on the capture under review` };
    }
    const resolved = plan.resolveDocument(ref, active, () => undefined);
    if (!resolved.ok) return resolved;
    if (ref.kind === 'workspace' && !checkoutReadsAsCaptured(await this.deps.heads.reading(document, activePatchsetId, resolved.value.file.path))) {
      return {
        ok: false,
        reason: `${ref.path} has changed since the capture, so its line numbers are not the review’s; capture again, or ask on the captured file`,
      };
    }
    if (this.deps.review.current?.sessionId !== view.sessionId) return { ok: false, reason: 'the active review changed meanwhile; try again' };
    return { ok: true, view, shown: resolved.value, activePatchsetId };
  }

  private documentRef(uri: vscode.Uri, view: ReviewView): TextDocumentRef | null {
    const ref = documentRef(uri, view.session.session.repoRoot);
    // The empty stand-in side of an added or deleted file shows no captured lines.
    return ref && ref.kind !== 'absent' ? ref : null;
  }

  private async commentingRanges(document: vscode.TextDocument): Promise<vscode.Range[]> {
    // Only the review's own documents: never a round's diff (rennet-round:), whose lines are another diff's.
    if (!isReviewDocumentScheme(document.uri.scheme)) return [];
    const target = await this.stagingTarget(document);
    if (!target.ok) return [];
    return plan
      .commentingSpans(target.shown, target.activePatchsetId)
      .map((span) => lineRange(document, span))
      .filter((range): range is vscode.Range => range !== null);
  }

  /** Makes VS Code ask for commenting ranges again when the review or its capture changed (or `force`). */
  private refreshCommentingRanges(force: boolean): void {
    const view = this.deps.review.current;
    const key = view ? `${view.sessionId}|${view.session.session.activePatchsetId}|${view.patchset?.id ?? ''}` : '';
    if (!force && key === this.rangesKey) return;
    this.rangesKey = key;
    this.controller.commentingRangeProvider = this.rangeProvider;
  }

  // ─── Drawing ───────────────────────────────────────────────────────────────────────────────

  /** The captured side a document shows, for drawing (synchronous: what is not known yet is asked for and drawn later). */
  private shownFor(document: vscode.TextDocument, view: ReviewView): plan.ShownDocument | null {
    const ref = this.documentRef(document.uri, view);
    if (!ref) return null;
    const activePatchsetId = view.session.session.activePatchsetId;
    const active = view.patchset && view.patchset.id === activePatchsetId ? view.patchset : null;
    // Only this session's captures are read for blob documents; another review's blobs show nothing of this one.
    const resolved = plan.resolveDocument(ref, active, (id) => (view.session.session.patchsetIds.includes(id) ? this.extraPatchset(id) : undefined));
    if (!resolved.ok) return null;
    if (ref.kind === 'workspace') {
      // Not known yet: drawn once the reading settles (onDidChangeReading).
      const reading = this.deps.heads.peek(document, resolved.value.patchsetId, resolved.value.file.path);
      if (!reading || !checkoutReadsAsCaptured(reading)) return null;
    }
    return resolved.value;
  }

  /** A capture a blob document shows that is not the active one: read once, then drawn on. */
  private extraPatchset(patchsetId: string): Patchset | undefined {
    if (this.extraPatchsets.has(patchsetId)) return this.extraPatchsets.get(patchsetId) ?? undefined;
    this.extraPatchsets.set(patchsetId, null);
    while (this.extraPatchsets.size > EXTRA_PATCHSETS) this.extraPatchsets.delete(this.extraPatchsets.keys().next().value as string);
    void this.deps.review.patchset(patchsetId).then((patchset) => {
      if (!patchset || !this.extraPatchsets.has(patchsetId)) return;
      this.extraPatchsets.set(patchsetId, patchset);
      this.reconcile();
    });
    return undefined;
  }

  /** Draws what belongs on every open document and removes what no longer does. */
  private reconcile(): void {
    if (this.disposed) return;
    const view = this.deps.review.current;
    const wanted = new Map<string, { document: vscode.TextDocument; subjects: Map<string, { subject: Subject; span: plan.LineSpan }> }>();
    if (view) {
      const findings = view.generation && findingThreadsOn() ? plan.flaggedFindings(view.generation) : [];
      for (const document of vscode.workspace.textDocuments) {
        if (!isReviewDocumentScheme(document.uri.scheme)) continue;
        const shown = this.shownFor(document, view);
        if (!shown) continue;
        const subjects = new Map<string, { subject: Subject; span: plan.LineSpan }>();
        if (view.projection) {
          for (const placement of plan.asksOn(view.projection, shown)) {
            subjects.set(`ask:${placement.askId}`, { subject: { kind: 'ask', sessionId: view.sessionId, placement }, span: placement.span });
          }
        }
        for (const finding of plan.findingsOn(findings, shown)) {
          if (!finding.codeRef) continue;
          const span = { startLine: finding.codeRef.startLine, endLine: finding.codeRef.endLine };
          subjects.set(`finding:${finding.key}`, { subject: { kind: 'finding', finding, acts: plan.findingActs(finding, view.projection) }, span });
        }
        if (subjects.size > 0) wanted.set(document.uri.toString(), { document, subjects });
      }
    }

    for (const [uri, drawn] of this.drawn) {
      const keep = wanted.get(uri)?.subjects;
      for (const [key, d] of drawn) {
        if (keep?.has(key)) continue;
        d.thread.dispose();
        drawn.delete(key);
      }
      if (drawn.size === 0) this.drawn.delete(uri);
    }

    for (const [uri, { document, subjects }] of wanted) {
      let drawn = this.drawn.get(uri);
      if (!drawn) {
        drawn = new Map();
        this.drawn.set(uri, drawn);
      }
      for (const [key, { subject, span }] of subjects) {
        const range = lineRange(document, span);
        if (!range) continue;
        this.draw(drawn, document, key, subject, span, range);
        const placeholder = this.placeholders.get(`${uri}|${key}`);
        if (placeholder) {
          this.placeholders.delete(`${uri}|${key}`);
          placeholder.dispose();
        }
      }
    }
  }

  private draw(drawn: Map<string, Drawn>, document: vscode.TextDocument, key: string, subject: Subject, span: plan.LineSpan, range: vscode.Range): void {
    const label = subject.kind === 'ask' ? plan.askThreadLabel(subject.placement.intent) : plan.findingThreadLabel(subject.finding, subject.acts);
    const contextValue = subject.kind === 'ask' ? plan.askContextValue(subject.placement.intent) : plan.findingContextValue(subject.acts);
    const threadSignature = JSON.stringify([range.start.line, range.end.line, range.end.character, label, contextValue]);
    const commentSignature =
      subject.kind === 'ask'
        ? JSON.stringify([subject.sessionId, subject.placement.text, subject.placement.intent, subject.placement.at])
        : JSON.stringify([
            subject.finding.key,
            subject.finding.severity,
            subject.finding.category,
            subject.finding.title,
            subject.finding.bodyMarkdown,
            subject.finding.remedyMarkdown,
            subject.finding.author,
          ]);
    const comment = () =>
      subject.kind === 'ask'
        ? new AskComment(document.uri.toString(), subject.sessionId, subject.placement.askId, subject.placement.text, subject.placement.intent, subject.placement.at)
        : new FindingComment(subject.finding);

    const existing = drawn.get(key);
    if (!existing) {
      const thread = this.controller.createCommentThread(document.uri, range, [comment()]);
      thread.canReply = false;
      thread.label = label;
      thread.contextValue = contextValue;
      thread.collapsibleState = subject.kind === 'ask' ? vscode.CommentThreadCollapsibleState.Expanded : vscode.CommentThreadCollapsibleState.Collapsed;
      drawn.set(key, { thread, subject, span, threadSignature, commentSignature });
      return;
    }
    existing.subject = subject;
    existing.span = span;
    if (existing.threadSignature !== threadSignature) {
      existing.threadSignature = threadSignature;
      if (!existing.thread.range?.isEqual(range)) existing.thread.range = range;
      existing.thread.label = label;
      existing.thread.contextValue = contextValue;
    }
    // A comment being edited keeps the reviewer's text; it is redrawn after Save or Cancel.
    const editing = existing.thread.comments.some((c) => c.mode === vscode.CommentMode.Editing);
    if (!editing && existing.commentSignature !== commentSignature) {
      existing.commentSignature = commentSignature;
      existing.thread.comments = [comment()];
    }
  }

  // ─── Acts (askThreads.ts, findingThreads.ts) find their thread here ─────────────────────────

  private findingOf(arg: unknown): { finding: plan.FindingPlacement; acts: plan.FindingActs } | undefined {
    for (const drawn of this.drawn.values()) {
      for (const d of drawn.values()) if (d.thread === arg && d.subject.kind === 'finding') return d.subject;
    }
    return undefined;
  }

  // ─── Commands without a thread ─────────────────────────────────────────────────────────────

  private async undoCommand(): Promise<void> {
    const result = await this.undo();
    if (result.ok) void notify('info', ui`Undid: ${result.value.label}`);
    else void notify('warning', ui`Nothing was undone: ${result.error.message}`);
  }
}

/** Lines `span` of a document as a range ending at the last line's end; null when the document is shorter. */
function lineRange(document: vscode.TextDocument, span: plan.LineSpan): vscode.Range | null {
  if (span.startLine < 1 || span.startLine > document.lineCount) return null;
  const end = Math.min(span.endLine, document.lineCount) - 1;
  return new vscode.Range(span.startLine - 1, 0, end, document.lineAt(end).range.end.character);
}

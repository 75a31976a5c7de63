import * as vscode from 'vscode';
import { LENSES, type Lens } from '../protocol/board';
import type { ActiveReview, ReviewView } from './activeReview';
import type { CapturedHeads } from './capturedHeads';
import { citationsOfDocument, emptyPlan, planMarks, REVEAL_ELEMENT_COMMAND, type CaptureFileName, type DocumentSide, type MarksPlan } from './citationMarksPlan';
import { documentRef, parseBlobUri } from './documentRefs';
import { describe } from './hostClient';

/** The setting "Rennet: Toggle Citation Marks" flips (section and key). */
export const CITATION_MARKS_SECTION = 'rennet.editor';
export const CITATION_MARKS_KEY = 'citationMarks';
const CITATION_MARKS_SETTING = `${CITATION_MARKS_SECTION}.${CITATION_MARKS_KEY}`;

/** At most one redraw per this many milliseconds, trailing (editor switches come in bursts). */
const UPDATE_THROTTLE_MS = 150;

/** Per lens: where its colour goes in the overview ruler (three lanes for five lenses, colours differ). */
const LENS_RULER: Record<Lens, { lane: vscode.OverviewRulerLane; color: string }> = {
  design: { lane: vscode.OverviewRulerLane.Left, color: '#4f8fe8b3' },
  sequence: { lane: vscode.OverviewRulerLane.Center, color: '#2fb5a0b3' },
  decisions: { lane: vscode.OverviewRulerLane.Center, color: '#a070e0b3' },
  flagged: { lane: vscode.OverviewRulerLane.Right, color: '#e5534bcc' },
  noise: { lane: vscode.OverviewRulerLane.Left, color: '#8b949e99' },
};

/** A mark as the test API reports it: 1-based, inclusive lines. */
export interface AppliedMark {
  lens: Lens;
  startLine: number;
  endLine: number;
}

/**
 * Gutter and overview-ruler marks for every citation of the generation the active review shows,
 * in every visible text editor: the workspace file and the `rennet-blob:` head document of a cited
 * head range, the `rennet-blob:` base document of a cited base range. One decoration type per lens,
 * created once; every update only sets ranges. Follows `ActiveReview`, the visible editors, opened
 * and edited documents and the `rennet.editor.citationMarks` setting.
 */
export class CitationMarks implements vscode.Disposable {
  private readonly types: Record<Lens, vscode.TextEditorDecorationType>;
  /** What each visible editor carries now (for the test API and to clear what was set). */
  private applied = new Map<vscode.TextEditor, AppliedMark[]>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Bumped by every update, so a slower earlier one (waiting on a blob) never applies over a newer. */
  private seq = 0;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    extensionUri: vscode.Uri,
    private readonly heads: CapturedHeads,
    private readonly review: ActiveReview,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.types = Object.fromEntries(
      LENSES.map((lens) => [
        lens,
        vscode.window.createTextEditorDecorationType({
          gutterIconPath: vscode.Uri.joinPath(extensionUri, 'media', `lens-${lens}.svg`),
          gutterIconSize: 'contain',
          overviewRulerLane: LENS_RULER[lens].lane,
          overviewRulerColor: LENS_RULER[lens].color,
          isWholeLine: true,
          rangeBehavior: vscode.DecorationRangeBehavior.ClosedClosed,
        }),
      ]),
    ) as Record<Lens, vscode.TextEditorDecorationType>;
    this.disposables.push(
      ...Object.values(this.types),
      review.onDidChange(() => this.schedule()),
      vscode.window.onDidChangeVisibleTextEditors(() => this.schedule()),
      vscode.workspace.onDidOpenTextDocument((document) => {
        if (document.uri.scheme === 'file' || parseBlobUri(document.uri)) this.schedule();
      }),
      // An edit can move lines: marks of that file are checked again (and dropped) right away.
      vscode.workspace.onDidChangeTextDocument(({ document }) => {
        if (document.uri.scheme === 'file' && vscode.window.visibleTextEditors.some((e) => e.document === document)) this.schedule();
      }),
      // The toggle (or the settings editor) flips the setting: marks go or come back at once.
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration(CITATION_MARKS_SETTING)) this.updateNow();
      }),
    );
    this.schedule();
  }

  /** The marks applied now to the visible editors of `uri` (a URI string), sorted; [] when none. */
  marksOf(uri: string): AppliedMark[] {
    const marks = new Map<string, AppliedMark>();
    for (const editor of vscode.window.visibleTextEditors) {
      if (editor.document.uri.toString() !== uri) continue;
      for (const mark of this.applied.get(editor) ?? []) marks.set(`${mark.lens}|${mark.startLine}|${mark.endLine}`, mark);
    }
    return [...marks.values()].sort((a, b) => a.startLine - b.startLine || LENSES.indexOf(a.lens) - LENSES.indexOf(b.lens));
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.seq++;
    for (const d of this.disposables.splice(0)) d.dispose();
    this.applied.clear();
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.update();
    }, UPDATE_THROTTLE_MS);
  }

  private updateNow(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    void this.update();
  }

  private async update(): Promise<void> {
    const seq = ++this.seq;
    try {
      const view = this.review.current;
      const generation = view?.generation;
      const enabled = vscode.workspace.getConfiguration(CITATION_MARKS_SECTION).get<boolean>(CITATION_MARKS_KEY, true);
      const editors = vscode.window.visibleTextEditors;
      if (!enabled || !view || !generation || generation.citations.length === 0) {
        this.apply(seq, editors.map((editor) => [editor, emptyPlan()]));
        return;
      }
      const files = await this.filesOf(view, generation.patchsetId);
      if (seq !== this.seq) return;
      const reveal = { sessionId: view.sessionId, generationId: generation.generationId };
      const plans: Array<[vscode.TextEditor, MarksPlan]> = [];
      for (const editor of editors) {
        const document = editor.document;
        const shown = this.documentSide(document, view, generation.patchsetId);
        const cited = shown ? citationsOfDocument(generation.citations, shown, files) : [];
        if (!shown || cited.length === 0) {
          plans.push([editor, emptyPlan()]);
          continue;
        }
        // Captured blobs never change; a workspace file must still read as captured, and one whose
        // head cannot be compared (binary, unreadable) verifies no line: no mark may name another line.
        const verifiedLines = document.uri.scheme === 'file' ? ((await this.heads.verifiedLines(document, generation.patchsetId, shown.path)) ?? 0) : Number.POSITIVE_INFINITY;
        if (seq !== this.seq) return;
        plans.push([editor, planMarks(cited, { lineCount: document.lineCount, verifiedLines }, reveal)]);
      }
      this.apply(seq, plans);
    } catch (error) {
      this.log.warn(`Citation marks could not be drawn: ${describe(error)}`);
    }
  }

  private apply(seq: number, plans: Array<[vscode.TextEditor, MarksPlan]>): void {
    if (seq !== this.seq) return;
    const applied = new Map<vscode.TextEditor, AppliedMark[]>();
    for (const [editor, plan] of plans) {
      const marks: AppliedMark[] = [];
      for (const lens of LENSES) {
        const options = plan[lens].map((mark): vscode.DecorationOptions => {
          marks.push({ lens, startLine: mark.startLine, endLine: mark.endLine });
          // To the end of the last line: a hover shows only where the range covers the text.
          // (Clamped: the document may have shrunk while another editor's blob was read; an update follows.)
          const last = Math.max(0, Math.min(mark.endLine, editor.document.lineCount) - 1);
          const range = new vscode.Range(Math.min(mark.startLine - 1, last), 0, last, editor.document.lineAt(last).range.end.character);
          return mark.hover === null ? { range } : { range, hoverMessage: trustedHover(mark.hover) };
        });
        // Editors that never had marks need no call; every other one is set (possibly to nothing).
        if (options.length > 0 || this.applied.has(editor)) editor.setDecorations(this.types[lens], options);
      }
      if (marks.length > 0) applied.set(editor, marks);
    }
    this.applied = applied;
  }

  /**
   * Which captured file and side a document shows: a `rennet-blob:` document of the generation's
   * capture, or a file under the review's repository (its head side). Anything else: null.
   */
  private documentSide(document: vscode.TextDocument, view: ReviewView, patchsetId: string): DocumentSide | null {
    const ref = documentRef(document.uri, view.session.session.repoRoot);
    if (ref?.kind === 'workspace') return { path: ref.path, side: 'head' };
    return ref?.kind === 'blob' && ref.patchsetId === patchsetId ? { path: ref.path, side: ref.side } : null;
  }

  /** The file names of the generation's capture: the session's (in hand), else an earlier one read whole. */
  private async filesOf(view: ReviewView, patchsetId: string): Promise<readonly CaptureFileName[] | null> {
    if (view.session.patchset?.id === patchsetId) return view.session.patchset.files;
    if (view.patchset?.id === patchsetId) return view.patchset.files;
    return (await this.review.patchset(patchsetId))?.files ?? null;
  }
}

/** A hover whose only runnable link is "Show on board"; no theme icons, no HTML (claims are model-written). */
function trustedHover(markdown: string): vscode.MarkdownString {
  const hover = new vscode.MarkdownString(markdown, false);
  hover.isTrusted = { enabledCommands: [REVEAL_ELEMENT_COMMAND] };
  hover.supportHtml = false;
  return hover;
}

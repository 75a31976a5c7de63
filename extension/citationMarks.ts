import * as vscode from 'vscode';
import { markdownString } from './ui';
import { LENSES, type Lens } from '../protocol/board';
import type { ActiveReview, ReviewView } from './activeReview';
import type { CapturedHeads } from './capturedHeads';
import { citationsOfDocument, combinedIconSvg, emptyPlan, gutterIconName, planMarks, type CaptureFileName, type DocumentSide, type MarksPlan } from './citationMarksPlan';
import { documentRef, parseBlobUri } from './documentRefs';
import { errorMessage } from '../protocol/result';

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

/** A lens's mark as the test API reports it: 1-based, inclusive lines. */
export interface AppliedMark {
  lens: Lens;
  startLine: number;
  endLine: number;
}

/** A gutter icon as the test API reports it: the lenses citing the lines and the icon's file name. */
export interface AppliedGutterIcon {
  lenses: Lens[];
  /** `lens-<lens>.svg`, or for several lenses e.g. `lens-sequence_lens-flagged.svg` (`gutterIconName`). */
  icon: string;
  startLine: number;
  endLine: number;
}

/** A gutter decoration type and the icon it actually draws (a lens's own, should a combined one fail). */
interface GutterType {
  type: vscode.TextEditorDecorationType;
  icon: string;
}

/**
 * Gutter and overview-ruler marks for every citation of the generation the active review shows,
 * in every visible text editor: the workspace file and the `rennet-blob:` head document of a cited
 * head range, the `rennet-blob:` base document of a cited base range. VS Code draws one gutter icon
 * per line, so the icon is its own decoration type per combination of lenses (a lens's own icon, or
 * one combining several, written once under `iconFolder`), each created the first time it is needed
 * and kept; the overview-ruler colours and the hovers are one decoration type per lens. Every
 * update only sets ranges. Follows `ActiveReview`, the visible editors, opened and edited documents
 * and the `rennet.editor.citationMarks` setting.
 */
export class CitationMarks implements vscode.Disposable {
  /** Per lens: overview-ruler colour and hovers, no gutter icon. */
  private readonly rulerTypes: Record<Lens, vscode.TextEditorDecorationType>;
  /** By `gutterIconName` of the lenses: at most 31, made on first use (a combined icon is written first). */
  private readonly gutterTypes = new Map<string, Promise<GutterType>>();
  /** The same, once made (what `apply` sets and clears). */
  private readonly settled = new Map<string, GutterType>();
  private lensIcons: Promise<Array<{ lens: Lens; svg: string }>> | undefined;
  /** What each visible editor carries now (for the test API and to clear what was set). */
  private applied = new Map<vscode.TextEditor, { marks: AppliedMark[]; gutter: AppliedGutterIcon[] }>();
  private disposed = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Bumped by every update, so a slower earlier one (waiting on a blob) never applies over a newer. */
  private seq = 0;
  private readonly disposables: vscode.Disposable[] = [];

  /**
   * `iconFolder`: where combined gutter icons are written (under the extension's global storage);
   * a lens's own icon is read from the extension's media folder.
   */
  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly iconFolder: vscode.Uri,
    private readonly heads: CapturedHeads,
    private readonly review: ActiveReview,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.rulerTypes = Object.fromEntries(
      LENSES.map((lens) => [
        lens,
        vscode.window.createTextEditorDecorationType({
          overviewRulerLane: LENS_RULER[lens].lane,
          overviewRulerColor: LENS_RULER[lens].color,
          isWholeLine: true,
          rangeBehavior: vscode.DecorationRangeBehavior.ClosedClosed,
        }),
      ]),
    ) as Record<Lens, vscode.TextEditorDecorationType>;
    this.disposables.push(
      ...Object.values(this.rulerTypes),
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

  /** The lens marks applied now to the visible editors of `uri` (a URI string), sorted; [] when none. */
  marksOf(uri: string): AppliedMark[] {
    const marks = new Map<string, AppliedMark>();
    for (const editor of vscode.window.visibleTextEditors) {
      if (editor.document.uri.toString() !== uri) continue;
      for (const mark of this.applied.get(editor)?.marks ?? []) marks.set(`${mark.lens}|${mark.startLine}|${mark.endLine}`, mark);
    }
    return [...marks.values()].sort((a, b) => a.startLine - b.startLine || LENSES.indexOf(a.lens) - LENSES.indexOf(b.lens));
  }

  /** The gutter icons applied now to the visible editors of `uri` (a URI string), by line; [] when none. */
  gutterOf(uri: string): AppliedGutterIcon[] {
    const icons = new Map<string, AppliedGutterIcon>();
    for (const editor of vscode.window.visibleTextEditors) {
      if (editor.document.uri.toString() !== uri) continue;
      for (const icon of this.applied.get(editor)?.gutter ?? []) icons.set(`${icon.icon}|${icon.startLine}|${icon.endLine}`, icon);
    }
    return [...icons.values()].sort((a, b) => a.startLine - b.startLine);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.seq++;
    this.disposed = true;
    for (const d of this.disposables.splice(0)) d.dispose();
    for (const pending of this.gutterTypes.values()) void pending.then(({ type }) => type.dispose());
    this.gutterTypes.clear();
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
        this.apply(
          seq,
          editors.map((editor) => [editor, emptyPlan()]),
        );
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
      // Every combination of lenses drawn gets its gutter type before any range is set.
      const needed = new Map(plans.flatMap(([, plan]) => plan.gutter.map((g) => [gutterIconName(g.lenses), g.lenses] as const)));
      const gutter = new Map<string, GutterType>();
      for (const [name, lenses] of needed) gutter.set(name, await this.gutterType(name, lenses));
      if (seq !== this.seq) return;
      this.apply(seq, plans, gutter);
    } catch (error) {
      this.log.warn(`Citation marks could not be drawn: ${errorMessage(error)}`);
    }
  }

  private apply(seq: number, plans: Array<[vscode.TextEditor, MarksPlan]>, gutter: ReadonlyMap<string, GutterType> = new Map()): void {
    if (seq !== this.seq) return;
    const applied = new Map<vscode.TextEditor, { marks: AppliedMark[]; gutter: AppliedGutterIcon[] }>();
    for (const [editor, plan] of plans) {
      // Editors that never had marks need no call; every other one is set (possibly to nothing).
      const hadMarks = this.applied.has(editor);
      const marks: AppliedMark[] = [];
      for (const lens of LENSES) {
        const options = plan.byLens[lens].map((mark): vscode.DecorationOptions => {
          marks.push({ lens, startLine: mark.startLine, endLine: mark.endLine });
          const range = lineRange(editor.document, mark.startLine, mark.endLine);
          return mark.hover === null ? { range } : { range, hoverMessage: markdownString(mark.hover) };
        });
        if (options.length > 0 || hadMarks) editor.setDecorations(this.rulerTypes[lens], options);
      }
      // One gutter type per line: a type may stand for several names (a combined icon that failed).
      const icons: AppliedGutterIcon[] = [];
      const rangesByType = new Map<vscode.TextEditorDecorationType, vscode.Range[]>();
      for (const mark of plan.gutter) {
        const drawn = gutter.get(gutterIconName(mark.lenses));
        if (!drawn) continue;
        icons.push({ lenses: mark.lenses, icon: drawn.icon, startLine: mark.startLine, endLine: mark.endLine });
        const ranges = rangesByType.get(drawn.type) ?? [];
        ranges.push(lineRange(editor.document, mark.startLine, mark.endLine));
        rangesByType.set(drawn.type, ranges);
      }
      for (const { type } of this.settledGutterTypes()) {
        const ranges = rangesByType.get(type) ?? [];
        if (ranges.length > 0 || hadMarks) editor.setDecorations(type, ranges);
      }
      if (marks.length > 0 || icons.length > 0) applied.set(editor, { marks, gutter: icons });
    }
    this.applied = applied;
  }

  /** The gutter types made so far, each once. */
  private settledGutterTypes(): Set<GutterType> {
    return new Set(this.settled.values());
  }

  /**
   * The gutter decoration type of a combination of lenses, made once: a lens's own icon from
   * media/, or a combined icon written under `iconFolder` first (each window writes its own copy
   * once, so an icon from an older version is replaced). Should that fail, the first lens's own icon
   * stands in, and the failure is logged.
   */
  private gutterType(name: string, lenses: readonly Lens[]): Promise<GutterType> {
    let pending = this.gutterTypes.get(name);
    if (!pending) {
      pending = this.makeGutterType(name, lenses).then((made) => {
        if (this.disposed) made.type.dispose();
        else this.settled.set(name, made);
        return made;
      });
      this.gutterTypes.set(name, pending);
    }
    return pending;
  }

  private async makeGutterType(name: string, lenses: readonly Lens[]): Promise<GutterType> {
    const first = lenses[0] as Lens;
    const own = (lens: Lens): GutterType => ({ type: gutterDecoration(vscode.Uri.joinPath(this.extensionUri, 'media', `lens-${lens}.svg`)), icon: gutterIconName([lens]) });
    if (lenses.length === 1) return own(first);
    const uri = vscode.Uri.joinPath(this.iconFolder, name);
    // Written aside and renamed over, so another window never reads a half-written icon.
    const aside = vscode.Uri.joinPath(this.iconFolder, `${name}.${process.pid}-${Date.now().toString(36)}.tmp`);
    try {
      const combined = combinedIconSvg((await this.readLensIcons()).filter((icon) => lenses.includes(icon.lens)));
      if (!combined.ok) throw new Error(combined.reason);
      await vscode.workspace.fs.createDirectory(this.iconFolder);
      await vscode.workspace.fs.writeFile(aside, Buffer.from(combined.svg, 'utf8'));
      await vscode.workspace.fs.rename(aside, uri, { overwrite: true });
      return { type: gutterDecoration(uri), icon: name };
    } catch (error) {
      void Promise.resolve(vscode.workspace.fs.delete(aside)).catch(() => undefined);
      this.log.warn(`The gutter icon ${name} could not be made (${errorMessage(error)}); lines cited by ${lenses.join(', ')} show the ${first} icon only.`);
      return own(first);
    }
  }

  /** The five lens icons as shipped in media/, read once. */
  private readLensIcons(): Promise<Array<{ lens: Lens; svg: string }>> {
    this.lensIcons ??= Promise.all(
      LENSES.map(async (lens) => ({ lens, svg: Buffer.from(await vscode.workspace.fs.readFile(vscode.Uri.joinPath(this.extensionUri, 'media', `lens-${lens}.svg`))).toString('utf8') })),
    );
    const icons = this.lensIcons;
    // A failed read is tried again next time rather than remembered.
    icons.catch(() => {
      if (this.lensIcons === icons) this.lensIcons = undefined;
    });
    return icons;
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

/** A gutter-icon-only decoration type: no ruler colour, no hover (those are the lens types'). */
function gutterDecoration(icon: vscode.Uri): vscode.TextEditorDecorationType {
  return vscode.window.createTextEditorDecorationType({
    gutterIconPath: icon,
    gutterIconSize: 'contain',
    isWholeLine: true,
    rangeBehavior: vscode.DecorationRangeBehavior.ClosedClosed,
  });
}

/**
 * Lines `startLine`..`endLine` (1-based) to the end of the last one: a hover shows only where the
 * range covers the text. Clamped: the document may have shrunk while another editor's blob was
 * read; an update follows.
 */
function lineRange(document: vscode.TextDocument, startLine: number, endLine: number): vscode.Range {
  const last = Math.max(0, Math.min(endLine, document.lineCount) - 1);
  return new vscode.Range(Math.min(startLine - 1, last), 0, last, document.lineAt(last).range.end.character);
}

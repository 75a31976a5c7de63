import * as vscode from 'vscode';
import type { AskProjection } from '../protocol/asks';
import type { Patchset } from '../protocol/patchset';
import type { GenerationSnapshot } from '../protocol/review';
import type { SessionSnapshot } from '../protocol/session';
import type { AskClient } from './asks';
import type { BoardPanels } from './boardPanel';
import type { Captures } from './captures';

/**
 * The review the editor surfaces follow: the session of the active board panel (else the one
 * active last), the generation that panel shows, the session's active patchset whole (hunks and
 * changed regions, from the window's one cache of captures) and its ask projection. Gutter marks,
 * comment threads and Open Changes read `current` and redraw on `onDidChange`; none of them asks
 * the host for these on its own.
 */
export interface ReviewView {
  sessionId: string;
  session: SessionSnapshot;
  /** The session's active capture, whole; null while none or while it is being read. */
  patchset: Patchset | null;
  /** The generation its panel shows (live or a pinned frozen one); null: none yet. */
  generation: GenerationSnapshot | null;
  /** null until the host answered. */
  projection: AskProjection | null;
}

export class ActiveReview implements vscode.Disposable {
  private view: ReviewView | null = null;
  private readonly emitter = new vscode.EventEmitter<ReviewView | null>();
  /** `current` changed (another session, a new generation, a new capture, an ask appended). */
  readonly onDidChange = this.emitter.event;
  private readonly disposables: vscode.Disposable[] = [this.emitter];

  constructor(
    private readonly captures: Captures,
    private readonly panels: BoardPanels,
    private readonly asks: AskClient,
  ) {
    this.disposables.push(
      panels.onDidChangeShown(() => this.recompute()),
      asks.onDidChange(({ sessionId }) => {
        if (sessionId === this.view?.sessionId) this.recompute();
      }),
    );
  }

  get current(): ReviewView | null {
    return this.view;
  }

  /** A patchset whole (the window's one cache, extension/captures.ts). null when the host cannot read it. */
  patchset(patchsetId: string): Promise<Patchset | null> {
    return this.captures.get(patchsetId);
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }

  private recompute(): void {
    const sessionId = this.panels.activeSessionId();
    const panel = sessionId ? this.panels.get(sessionId) : undefined;
    const session = panel?.sessionSnapshot;
    if (!sessionId || !session) {
      if (this.view !== null) {
        this.view = null;
        this.emitter.fire(null);
      }
      return;
    }
    const patchsetId = session.session.activePatchsetId;
    const patchset = patchsetId ? (this.captures.peek(patchsetId) ?? null) : null;
    const projection = this.asks.projection(sessionId) ?? null;
    if (!projection) void this.asks.refresh(sessionId);
    this.view = { sessionId, session, patchset, generation: panel.lastGeneration ?? null, projection };
    this.emitter.fire(this.view);
    if (patchsetId && !patchset) {
      void this.patchset(patchsetId).then((loaded) => {
        if (loaded && this.view?.sessionId === sessionId && this.view.session.session.activePatchsetId === patchsetId) this.recompute();
      });
    }
  }
}

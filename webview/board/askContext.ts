/**
 * What the board's ask affordances may read and do. The App provides the session-level surface
 * (the projection, the target kind, its Explains, how to send an act); GenerationView narrows it
 * to the shown generation. Without a surface (component tests of the board alone, the HTML page)
 * no ask affordance renders.
 */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { AskCommand, AskLane, AskProjection, Lens, QuoteAnchor } from '../../protocol';
import type { RevealRequest } from '../state';
import type { ExplainRequest, FindingMarks, GenerationScope, ThreadEntry } from './asks';

export interface AskSurface {
  /** The exit lane a new ask joins (protocol/session.ts askLaneFor); null until the session snapshot arrived. */
  lane: AskLane | null;
  /** The session's ask projection; null until the first arrived. */
  projection: AskProjection | null;
  /** Explains this panel asked for, by requestId. */
  explains: Readonly<Record<string, ExplainRequest>>;
  /** Bumped by every refusal notice: a composer waiting on its act stops waiting. */
  refusalSeq: number;
  /** Send one reviewer act (validated against the contract first; an invalid one is said, not sent). */
  command(command: AskCommand): void;
  /** Ask the session's agent to explain a quoted span (a fresh requestId; status comes back). */
  explain(anchor: QuoteAnchor): void;
  /** A reveal whose generation is the one shown; null: none waiting. */
  reveal: RevealRequest | null;
  revealDone(seq: number, found: boolean): void;
}

export const AskSurfaceContext = createContext<AskSurface | null>(null);

export function useAskSurface(): AskSurface | null {
  return useContext(AskSurfaceContext);
}

/** The surface narrowed to the shown generation, with the projection indexed for it. */
export interface BoardAsks extends AskSurface {
  scope: GenerationScope;
  /** A frozen generation: read-only, nothing can be asked of it. */
  frozen: boolean;
  /** findingKey → what the log says about that finding. */
  marks: ReadonlyMap<string, FindingMarks>;
  /** placeKey → the quote threads under that element (detached ones are under none). */
  threads: ReadonlyMap<string, ThreadEntry[]>;
  /** Lens → the detached threads this generation's view lists for it (asks.ts detachedByLens). */
  detached: ReadonlyMap<Lens, ThreadEntry[]>;
  /** placeKey → the latest Explain asked there. */
  explainsByPlace: ReadonlyMap<string, ExplainRequest & { requestId: string }>;
}

export const BoardAsksContext = createContext<BoardAsks | null>(null);

export function useBoardAsks(): BoardAsks | null {
  return useContext(BoardAsksContext);
}

/** Why nothing can be asked of the shown generation. */
export const FROZEN_REASON = 'This is an earlier generation, kept read-only: show the latest to act on its boards.';

import type { Absence, CitationSide } from '../../protocol/board';
import { CORE_LENSES, elementField } from '../../protocol/board';
import type { FileChange, Hunk, Patchset } from '../../protocol/patchset';
import type { CitationIndex } from './citations';
import { findProseCitations } from './prose';
import type { BoardState } from './state';

/**
 * The Noise board's membership, derived (pure). Noise is a position: a hunk that none of the four
 * core lenses cited. Membership is set subtraction over hunk ids, never a model's judgement.
 *
 * Decisions taken here (each also stated where it applies):
 * - The unit is the hunk. A citation of either side of a hunk cancels the whole hunk; an uncited
 *   hunk is one member, filed on its head-side region when it has one, else on its base side
 *   (a pure deletion).
 * - A renamed file is one FileChange: its hunks are filed once, under the current path.
 * - Binary, submodule and mode-only files have no hunks, so they contribute no member.
 * - A truncated file contributes the hunks that were captured. Its uncaptured tail (everything
 *   from `truncation.tailFrom` on, and the whole file for a file-size truncation) has no hunk id,
 *   so no citation can cancel it and it cannot be a member: it is stated on the board through the
 *   file's truncation, not filed as skippable.
 */

/** The four lanes whose citations the complement subtracts. */
export type CoreLens = (typeof CORE_LENSES)[number];

/** What one core lane said, as the complement reads it. */
export type LaneOutcome =
  /** The lane settled a board: its citations subtract. */
  | { kind: 'settled'; citedHunkIds: ReadonlySet<string> }
  /** The lane declared an admissible absence: it cites nothing (an empty set, which subtracts safely). */
  | { kind: 'absent'; absence: Absence }
  /**
   * The lane failed: it stated nothing, which is not an empty set. `retryable` is its own typed
   * account; null when it failed without one (an unknown ladder, which is not an exhausted one).
   */
  | { kind: 'failed'; retryable: boolean | null };

export type CoreLaneOutcomes = Record<CoreLens, LaneOutcome>;

/** One changed region the host places on the Noise board as a member (host-owned fields). */
export interface NoiseMemberInput {
  path: string;
  side: CitationSide;
  start_line: number;
  end_line: number;
  hunk_id: string;
}

export type NoiseDerivation =
  /** Uncited hunks, in patchset file order then hunk order. Never empty. */
  | { kind: 'members'; members: NoiseMemberInput[] }
  /** The core lanes between them cited every hunk: the host settles `no-noise` with no seat. */
  | { kind: 'no-noise' }
  /**
   * At least one core lane failed, so the complement is unknowable and Noise settles as a typed
   * failure naming those lanes (canonical order). Retryable while any named lane is retryable or
   * has no account; terminal only when every named lane is terminal.
   */
  | { kind: 'failed'; lanes: CoreLens[]; retryable: boolean };

/**
 * The complement of what the four core lanes cited. A failure of any lane wins over any
 * membership: a complement over a partial set of siblings would present unread hunks as skippable.
 */
export function deriveNoiseMembers(patchset: Patchset, lanes: CoreLaneOutcomes): NoiseDerivation {
  const failed: CoreLens[] = [];
  let retryable = false;
  const cited = new Set<string>();
  for (const lens of CORE_LENSES) {
    const outcome = lanes[lens];
    switch (outcome.kind) {
      case 'failed':
        failed.push(lens);
        if (outcome.retryable !== false) retryable = true;
        break;
      case 'settled':
        for (const id of outcome.citedHunkIds) cited.add(id);
        break;
      case 'absent':
        // An admissible absence cites nothing: an empty set.
        break;
    }
  }
  if (failed.length > 0) return { kind: 'failed', lanes: failed, retryable };

  const members: NoiseMemberInput[] = [];
  const filed = new Set<string>();
  for (const file of patchset.files) {
    for (const hunk of file.hunks) {
      if (cited.has(hunk.id) || filed.has(hunk.id)) continue;
      filed.add(hunk.id);
      members.push(memberOf(file, hunk));
    }
  }
  return members.length === 0 ? { kind: 'no-noise' } : { kind: 'members', members };
}

/** The region a hunk is filed on: its head side when it has one, else its base side. */
function memberOf(file: FileChange, hunk: Hunk): NoiseMemberInput {
  const stamped = (side: CitationSide) => file.regions.find((r) => r.hunkId === hunk.id && r.side === side);
  const head = stamped('head');
  if (head) return { path: file.path, side: 'head', start_line: head.startLine, end_line: head.endLine, hunk_id: hunk.id };
  const base = stamped('base');
  if (base) return { path: file.path, side: 'base', start_line: base.startLine, end_line: base.endLine, hunk_id: hunk.id };
  // Regions are stamped from the hunks at capture; recompute from the header if one is missing.
  if (hunk.newLines > 0) {
    return { path: file.path, side: 'head', start_line: hunk.newStart, end_line: hunk.newStart + hunk.newLines - 1, hunk_id: hunk.id };
  }
  return {
    path: file.path,
    side: 'base',
    start_line: Math.max(1, hunk.oldStart),
    end_line: Math.max(1, hunk.oldStart + hunk.oldLines - 1),
    hunk_id: hunk.id,
  };
}

// ─── What a board cited ──────────────────────────────────────────────────────────────────────

/**
 * Finds the citations in a piece of Markdown and returns the hunk ids they resolve to (citations
 * that do not resolve contribute nothing). Injected so this module does not depend on how prose
 * citations are parsed; `proseCitationResolver` builds the production one.
 */
export type ResolveProseCitations = (markdown: string) => readonly string[];

/**
 * The production prose resolver: citations found by prose.ts (repo-relative ones only; the
 * malformed shapes it reports are refused at the write boundary and cite nothing), resolved on the
 * head side, the only side prose names, through the patchset's citation index.
 */
export function proseCitationResolver(index: CitationIndex): ResolveProseCitations {
  return (markdown) => {
    const ids: string[] = [];
    for (const citation of findProseCitations(markdown, index)) {
      if (citation.problem !== null) continue;
      const resolved = index.resolve(citation.path, 'head', citation.start, citation.end);
      if (resolved.ok) ids.push(...resolved.hunkIds);
    }
    return ids;
  };
}

/** Element fields that hold Markdown a seat may cite lines in. */
const PROSE_FIELDS: readonly string[] = ['markdown', 'body_markdown', 'explanation_markdown', 'remedy_markdown', 'text_markdown', 'part_bodies'];

/**
 * Every hunk a board cited: the host-resolved `hunk_ids` of each code_ref on it (the whole
 * element pool, attached or not: a citation the lane stated is a citation), plus the hunks its
 * prose cites, when a prose resolver is given (the document's intro and every Markdown field).
 */
export function citedHunkIds(board: BoardState, resolveProseCitations?: ResolveProseCitations): Set<string> {
  const cited = new Set<string>();
  const fromProse = (markdown: unknown) => {
    if (!resolveProseCitations) return;
    const texts = Array.isArray(markdown) ? markdown : [markdown];
    for (const text of texts) {
      if (typeof text !== 'string' || text.length === 0) continue;
      for (const id of resolveProseCitations(text)) cited.add(id);
    }
  };
  fromProse(board.document.intro_markdown);
  for (const element of board.elements.values()) {
    if (element.kind === 'code_ref') for (const id of element.hunk_ids ?? []) cited.add(id);
    for (const field of PROSE_FIELDS) fromProse(elementField(element, field));
  }
  return cited;
}

// ─── Specification-only changes ─────────────────────────────────────────────────────────────

export interface SpecArtifactRoot {
  /** The rule as a reader would write it. */
  pattern: string;
  matches(path: string): boolean;
}

const underRoot = (root: string) => (path: string) => path.startsWith(`${root}/`);
const MARKDOWN = /\.(md|markdown)$/i;
/** A Markdown file anywhere below a `docs/<dir>/` directory, at any depth of the repository. */
const markdownUnderDocs = (dir: string) => (path: string) => MARKDOWN.test(path) && (path.startsWith(`docs/${dir}/`) || path.includes(`/docs/${dir}/`));
const basename = (path: string) => path.slice(path.lastIndexOf('/') + 1);

/**
 * SPEC_ARTIFACT_ROOTS: the paths the Design readers select on. A change is specification-only when
 * every path it touches (a rename's old path included) matches one of these. Root globs are
 * anchored at the repository root; ADR directories and CONTEXT files match at any depth.
 */
export const SPEC_ARTIFACT_ROOTS: readonly SpecArtifactRoot[] = [
  { pattern: 'openspec/**', matches: underRoot('openspec') },
  { pattern: '.kiro/**', matches: underRoot('.kiro') },
  { pattern: '.bmad/**', matches: underRoot('.bmad') },
  { pattern: '.bmad-core/**', matches: underRoot('.bmad-core') },
  // BMAD's stories (docs/stories) and v6 output (_bmad-output/planning-artifacts, implementation-artifacts).
  { pattern: 'docs/stories/**', matches: underRoot('docs/stories') },
  { pattern: '_bmad-output/**', matches: underRoot('_bmad-output') },
  { pattern: 'docs/superpowers/**', matches: underRoot('docs/superpowers') },
  { pattern: '.superpowers/**', matches: underRoot('.superpowers') },
  { pattern: '**/docs/adr/**/*.md', matches: markdownUnderDocs('adr') },
  { pattern: '**/docs/decisions/**/*.md', matches: markdownUnderDocs('decisions') },
  { pattern: '**/CONTEXT.md', matches: (path) => basename(path) === 'CONTEXT.md' },
  { pattern: '**/CONTEXT-MAP.md', matches: (path) => basename(path) === 'CONTEXT-MAP.md' },
];

export function isSpecArtifactPath(path: string): boolean {
  return SPEC_ARTIFACT_ROOTS.some((root) => root.matches(path));
}

/**
 * True when every changed path, and every rename's old path, is a specification artifact. An
 * empty change is not specification-only, and neither is a docs-only or README-only one.
 */
export function isSpecOnlyChange(patchset: Pick<Patchset, 'files'>): boolean {
  if (patchset.files.length === 0) return false;
  return patchset.files.every((file) => isSpecArtifactPath(file.path) && (file.oldPath === null || isSpecArtifactPath(file.oldPath)));
}

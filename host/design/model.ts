import type { BoardState } from '../board/state';

/**
 * The assembler's format-neutral model: what a specification obliges, by kind, whichever format
 * it was read from. Readers build it; render.ts turns it into board calls. Every string in it is
 * the specification's own text or one of the fixed labels below.
 */

// ─── Formats ─────────────────────────────────────────────────────────────────────────────────

/** The fixed detection order: the first format a patchset touches is the one rendered. */
export const SPEC_FORMATS = ['openspec', 'kiro', 'bmad', 'superpowers', 'grill-with-docs'] as const;
export type SpecFormat = (typeof SPEC_FORMATS)[number];

export const FORMAT_NAMES: Record<SpecFormat, string> = {
  openspec: 'OpenSpec',
  kiro: 'Kiro',
  bmad: 'BMAD',
  superpowers: 'Superpowers',
  'grill-with-docs': 'grill-with-docs',
};

export type DesignAssembly =
  { kind: 'board'; format: SpecFormat; sources: string[]; state: BoardState } | { kind: 'none' } | { kind: 'fallback'; format: SpecFormat; sources: string[]; rule: string; reason: string };

// ─── Assembler rules (a spec the readers cannot parse into the obligation kinds) ────────────

/**
 * Rule ids for refusals that happen before any board call: the file could not be read, or a
 * piece of it cannot be one of the obligation kinds. Board refusals carry the board's own ids.
 */
export const ASSEMBLER_RULES = ['spec-unreadable', 'spec-requirement-text', 'spec-empty'] as const;
export type AssemblerRule = (typeof ASSEMBLER_RULES)[number];

export class SpecParseError extends Error {
  constructor(
    readonly rule: AssemblerRule,
    readonly path: string,
    readonly line: number | null,
    reason: string,
  ) {
    super(`${path}${line === null ? '' : `:${line}`}: ${reason}`);
    this.name = 'SpecParseError';
  }
}

// ─── Fixed labels (the only strings the assembler writes that are not the spec's own) ───────

export const LABELS = {
  /** A code block whose lines cannot be named (one that only appears when texts are joined). */
  codeBlock: '[code block omitted: code on a board is cited, not copied]',
  /** The caption of a code_ref to a code block of the specification's own changed lines. */
  specCodeBlock: 'Code block in the specification',
  /** A check box with no text after it. */
  emptyTask: '[no text after this check box]',
  frontMatter: '[front matter omitted: file metadata, not specification text]',
  emptyHeading: '[no text under this heading]',
  /** A requirement whose heading is followed by its scenarios (or criteria) and no text of its own. */
  noRequirementText: '[no requirement text before its scenarios]',
  rowsFollow: '[no lead text under this heading; its items follow in source order]',
  removedNoReason: '[removed; the specification states no reason]',
  noProposalWhy: 'This change has no proposal Why section to introduce it.',
  noIntroduction: 'This specification has no introduction section.',
  decisionSource: 'Where the decision is stated',
  /** Stats. */
  statFormat: 'Format',
  statCapabilities: 'Capabilities',
  statRequirements: 'Requirements',
  statScenarios: 'Scenarios',
  statTasks: 'Tasks',
  statTasksDone: 'Tasks done',
  statDecisions: 'Decisions',
  statGlossary: 'Glossary terms',
  statGroupsComplete: 'Task groups complete (progress ledger)',
  /** Titles when the spec has none of its own. */
  openspecSpecsTitle: 'OpenSpec specifications',
  kiroSteeringTitle: 'Kiro steering',
  grillTitle: 'Decision records and context',
  grillIntro: 'Transcribed from the decision records and context documents this branch changes.',
  steeringIntro: 'Transcribed from the Kiro steering documents this branch changes.',
  specsIntro: 'Transcribed from the current OpenSpec specifications this branch changes.',
} as const;

/**
 * Where a code block of the specification stands, in place of its bytes: "[code block:
 * <path> lines 12–18]". A code block of changed lines is also cited by a code_ref.
 */
export const codeBlockLabel = (span: CodeSpan) => `[code block: ${span.path} ${span.start === span.end ? `line ${span.start}` : `lines ${span.start}–${span.end}`}]`;

/** "Renamed from: <old name>" — a RENAMED delta has no normative text of its own. */
export const renamedFromLabel = (from: string) => `Renamed from: ${from}`;
/** "Acceptance criterion 1.2" — a numbered criterion's name. */
export const criterionLabel = (number: string) => `Acceptance criterion ${number}`;

// ─── Blocks ──────────────────────────────────────────────────────────────────────────────────

export type SpecDelta = 'added' | 'modified' | 'removed' | 'renamed';

/**
 * A code block of a specification file: its 1-based inclusive head-side lines (the code, without
 * the fence lines). A text that held it carries its label instead; where these lines are changed
 * lines of the patchset, the board cites them with a code_ref.
 */
export interface CodeSpan {
  path: string;
  start: number;
  end: number;
}

export interface ScenarioBlock {
  name: string;
  text: string;
  condition: string | null;
  response: string | null;
  /** Code blocks the scenario's text labels (cited under its requirement). */
  code?: CodeSpan[];
}

export interface DecisionData {
  title: string;
  statement: string;
  rationale: string | null;
  alternatives: string[];
  sourcePath: string;
  /** 1-based inclusive head-side lines of the statement: the decision's evidence when it resolves. */
  range: { start: number; end: number };
  /** Code blocks its statement, rationale or alternatives label (cited beside the decision). */
  code?: CodeSpan[];
}

/**
 * `code` on a block: the code blocks its own text labels, cited after it (a section's first
 * children, a prose row's next siblings, a requirement's last children) where they are changed
 * lines; the label alone stands otherwise.
 */
export type Block =
  | { kind: 'section'; title: string; body: string | null; sourcePaths?: string[]; children: Block[]; code?: CodeSpan[] }
  | { kind: 'prose'; markdown: string; glossary?: boolean; code?: CodeSpan[] }
  | {
      kind: 'requirement';
      title: string;
      shall: string;
      sourcePath: string;
      sourceLine: number;
      candidate: string;
      delta: SpecDelta | null;
      scenarios: ScenarioBlock[];
      notes: string[];
      /** Code blocks its normative text and notes label (its scenarios carry their own). */
      code?: CodeSpan[];
    }
  /** A code block standing as a row of its own: a code_ref when its lines are changed lines, else its label as prose. */
  | { kind: 'code'; span: CodeSpan }
  | { kind: 'task'; text: string; done: boolean; sourcePath: string; sourceLine: number }
  /**
   * A stated decision. The board's decision kind needs stated alternatives and evidence; when the
   * spec states none, or the statement's lines do not resolve to a changed region, the renderer
   * writes `fallback` (the same text as sections and prose) in its place. `preferred` is the
   * sibling list written when the decision can be a decision element; it holds one
   * `{ kind: 'decision-slot' }` where the element goes.
   */
  | { kind: 'decision'; decision: DecisionData; preferred: Block[]; fallback: Block[] }
  | { kind: 'decision-slot'; decision?: DecisionData };

/** One specification, read: what the board will say, before any call is made. */
export interface SpecDocument {
  format: SpecFormat;
  title: string;
  intro: string;
  /** Every rendered file, in reading order, once. */
  sources: string[];
  /** One top-level section per source file, in reading order. */
  files: Block[];
  /** Counts a reader knows that the blocks do not carry (OpenSpec capabilities). */
  capabilities: number | null;
  /** Superpowers: task groups a bound progress ledger completes, of the plan's groups. */
  ledger: { complete: number; groups: number } | null;
}

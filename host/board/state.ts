import type { Absence, BoardDocument, BoardElement, BoardStatus, ElementKind, FinishPointer, Lens, ProseRegister, ReferenceRepair, Refusal, ReviewName } from '../../protocol/board';
import { MEASURE_BY_LENS } from '../../protocol/board';

/**
 * The contract between the board writer (pure), the tool surface (MCP and in-process) and the
 * store. A board is a value: applying a verb returns the next board and a result, and never
 * mutates its input.
 */
export interface BoardState {
  lens: Lens;
  patchsetId: string;
  document: BoardDocument;
  /** Every element, in creation order (Map insertion order is the order of record). */
  elements: ReadonlyMap<string, BoardElement>;
  status: BoardStatus;
  absence: Absence | null;
  /** Revision of the last accepted write; monotonic per board. */
  revision: number;
  /** Next id number the host mints (`e<n>`); ids are never reused on a board. */
  nextId: number;
  repairs: readonly ReferenceRepair[];
  /** The last finish verdict, carried into a follow-up turn and nothing else. */
  lastFinish: readonly FinishPointer[] | null;
}

export function emptyBoard(lens: Lens, patchsetId: string, register: ProseRegister = 'authored'): BoardState {
  return {
    lens,
    patchsetId,
    document: { title: '', intro_markdown: '', measure: MEASURE_BY_LENS[lens], prose_register: register },
    elements: new Map(),
    status: 'drafting',
    absence: null,
    revision: 0,
    nextId: 1,
    repairs: [],
    lastFinish: null,
  };
}

/** One call on a board: what a tool call (or a write_board entry) becomes. */
export type VerbCall =
  | { verb: 'set_document'; input: Record<string, unknown> }
  | { verb: 'add'; kind: ElementKind; input: Record<string, unknown> }
  | { verb: 'update'; kind: ElementKind; input: Record<string, unknown> }
  | { verb: 'cite'; input: Record<string, unknown> }
  | { verb: 'remove_element'; input: Record<string, unknown> }
  | { verb: 'finish' }
  | { verb: 'settle_absent' };

/** What a verb did. Every variant renders to a bounded text result (≤ RESULT_MAX_BYTES). */
export type VerbResult =
  | { status: 'accepted'; verb: VerbCall['verb']; id: string | null; message: string; removed?: readonly string[] }
  | { status: 'refused'; verb: VerbCall['verb']; refusals: readonly Refusal[] }
  | { status: 'settled'; absence: Absence | null; message: string }
  | { status: 'pointers'; pointers: readonly FinishPointer[] };

/** Who is writing and against what: everything a rule may read besides the board. */
export interface WriterContext {
  /** Author stamped on created elements (a model name, `host`, `assembler`). */
  author: string;
  citations: CitationIndexLike;
  /**
   * The names of the reviews a Flagged compiler seat compiles (`claude`, `codex`, `claude-2`: one
   * per review that handed in findings, as its findings file is named). The pipeline sets it for
   * the compiler only: a finding's origin and agreement must then be facts about these reviews
   * (rule origin-compiled), and each finding is scored (rule finding-scored). Absent for every
   * other seat, and for boards not written by the pipeline (a standalone seat server, imports),
   * where nothing is known to check.
   */
  reviewedBy?: readonly ReviewName[];
  /**
   * The words the captured change uses (prose.ts changeVocabulary): a process word among them is
   * the change's own domain word and passes the process-vocabulary rule. Absent: none pass.
   */
  changeWords?: ReadonlySet<string>;
}

/**
 * What the citation rules need from a captured patchset (host/board/citations.ts builds it).
 * Declared here so the writer and the tool surface agree without importing each other.
 */
export interface CitationIndexLike {
  readonly patchsetId: string;
  /** Resolve a 1-based inclusive range on one side of a path. */
  resolve(path: string, side: 'base' | 'head', start: number, end: number): CitationResolution;
  /**
   * Optional path knowledge (buildCitationIndex provides both): is this a changed path, and which
   * changed paths carry this basename. Without them a bare basename is left to citation-resolves.
   */
  hasPath?(path: string): boolean;
  pathsNamed?(basename: string): readonly string[];
  /**
   * The changed path a cited path names, written either way the read tools accept it: as is, or
   * with its control characters escaped as list_changes and read_diff print it (protocol/text.ts).
   * Any other path comes back unchanged. A code_ref stores this form.
   */
  changedPath?(path: string): string;
}

export type CitationResolution =
  | { ok: true; path: string; hunkIds: readonly string[] }
  | {
      ok: false;
      reason: 'unknown-path' | 'outside-changed-regions' | 'past-end-of-file' | 'side-absent' | 'not-line-addressable';
      /** The nearest changed range on that side, when there is one: "path:12-20". */
      nearest: string | null;
      message: string;
    };

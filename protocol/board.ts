import { z } from 'zod';

/**
 * Lens boards: the document envelope, every element kind, and the two tables every rule and the
 * tool surface read (which kinds a lens authors; which absences a lens admits). Nothing restates
 * these tables; derive from them.
 *
 * Field naming: persisted element fields are snake_case, exactly the names of the flat tool
 * inputs that write them, so a refusal naming a field names the argument the seat passed.
 */

// ─── Lenses ──────────────────────────────────────────────────────────────────────────────────

/** Display order is canonical: Design, Sequence, Decisions, Flagged, Noise. */
export const LENSES = ['design', 'sequence', 'decisions', 'flagged', 'noise'] as const;
export const Lens = z.enum(LENSES);
export type Lens = z.infer<typeof Lens>;

/** The four lanes whose citations Noise subtracts. */
export const CORE_LENSES = ['design', 'sequence', 'decisions', 'flagged'] as const satisfies readonly Lens[];

export const LENS_TITLES: Record<Lens, string> = {
  design: 'Design',
  sequence: 'Sequence',
  decisions: 'Decisions',
  flagged: 'Flagged',
  noise: 'Noise',
};

// ─── Element kinds ───────────────────────────────────────────────────────────────────────────

export const ELEMENT_KINDS = [
  'section',
  'prose',
  'order_step',
  'decision',
  'finding',
  'code_ref',
  'requirement',
  'scenario',
  'task',
  'stat',
  'callout',
  'noise_member',
  'noise_group',
  'round_outcome',
] as const;
export const ElementKind = z.enum(ELEMENT_KINDS);
export type ElementKind = z.infer<typeof ElementKind>;

/** Kinds every lens authors. */
export const SHARED_AUTHORING_KINDS = ['section', 'prose', 'code_ref', 'callout'] as const satisfies readonly ElementKind[];

/** The typed kinds each lens authors beside the shared ones (LENS_TYPED_KINDS). */
export const LENS_TYPED_KINDS: Record<Lens, readonly ElementKind[]> = {
  design: ['requirement', 'scenario', 'task', 'stat', 'decision'],
  sequence: ['order_step'],
  decisions: ['decision'],
  flagged: ['finding'],
  noise: ['noise_group', 'noise_member'],
};

/**
 * Kinds whose elements the host creates and a seat may only update (re-parent, annotate).
 * Noise members are derived membership: no verb creates or removes one.
 */
export const HOST_DERIVED_MEMBER_KINDS: readonly ElementKind[] = ['noise_member'];

/** Kinds only the host writes (the landed-round report). No lens tool touches them. */
export const HOST_ONLY_KINDS: readonly ElementKind[] = ['round_outcome'];

export function lensAuthoredKinds(lens: Lens): ElementKind[] {
  return [...SHARED_AUTHORING_KINDS, ...LENS_TYPED_KINDS[lens]];
}

/** The one lens that writes its whole board in one call (write_board). */
export function writesWholeBoard(lens: Lens): boolean {
  return LENS_TYPED_KINDS[lens].some((kind) => HOST_DERIVED_MEMBER_KINDS.includes(kind));
}

// ─── Absences ────────────────────────────────────────────────────────────────────────────────

export const ABSENCES = ['no-spec', 'no-decisions', 'no-findings', 'no-noise', 'spec-only'] as const;
export const Absence = z.enum(ABSENCES);
export type Absence = z.infer<typeof Absence>;

export interface AbsenceRow {
  absence: Absence;
  /** A seat declares it with settle_absent, or the host settles it before any seat runs. */
  settledBy: 'seat' | 'host';
  /** Reader-facing meaning, shown on the board and fixed in settle_absent's description. */
  meaning: string;
}

const SPEC_ONLY: AbsenceRow = {
  absence: 'spec-only',
  settledBy: 'host',
  meaning: 'Every changed path is a specification artifact, so only the Design reading applies to this change.',
};

/** LENS_ADMISSIBLE_ABSENCES: the only absences a lens may settle with. Sequence admits none of its own. */
export const LENS_ADMISSIBLE_ABSENCES: Record<Lens, readonly AbsenceRow[]> = {
  design: [
    {
      absence: 'no-spec',
      settledBy: 'seat',
      meaning: 'No specification was found for this branch, and there was no pull request description, documentation change or related issue to draft an overview from.',
    },
  ],
  sequence: [SPEC_ONLY],
  decisions: [{ absence: 'no-decisions', settledBy: 'seat', meaning: 'The change makes no judgement call worth recording: no choice between viable alternatives.' }, SPEC_ONLY],
  flagged: [{ absence: 'no-findings', settledBy: 'seat', meaning: 'A careful reading of the change found no defect worth raising.' }, SPEC_ONLY],
  noise: [{ absence: 'no-noise', settledBy: 'host', meaning: 'Every changed region is cited on another reading of this change, so none is filed as skippable.' }, SPEC_ONLY],
};

/** The absence a lens's seat may declare with settle_absent, if any (at most one per lens). */
export function seatAbsence(lens: Lens): AbsenceRow | undefined {
  return LENS_ADMISSIBLE_ABSENCES[lens].find((row) => row.settledBy === 'seat');
}

// ─── Value enums ─────────────────────────────────────────────────────────────────────────────

/**
 * File extensions that make the left side of `x:12` a source, config or markup path: the host's
 * prose rules and the panel's citation links read this one list. Anything else (`127.0.0.1:0`,
 * `v1.2:3`) stays prose.
 */
export const SOURCE_EXTENSIONS: readonly string[] = [
  // languages
  'ts',
  'tsx',
  'mts',
  'cts',
  'js',
  'jsx',
  'mjs',
  'cjs',
  'py',
  'pyi',
  'rb',
  'go',
  'rs',
  'java',
  'kt',
  'kts',
  'scala',
  'groovy',
  'swift',
  'm',
  'mm',
  'c',
  'h',
  'cc',
  'cpp',
  'cxx',
  'hpp',
  'hh',
  'hxx',
  'cs',
  'fs',
  'fsx',
  'vb',
  'php',
  'pl',
  'pm',
  'lua',
  'r',
  'jl',
  'ex',
  'exs',
  'erl',
  'hrl',
  'hs',
  'ml',
  'mli',
  'elm',
  'clj',
  'cljs',
  'dart',
  'zig',
  'nim',
  'sol',
  'vue',
  'svelte',
  'astro',
  'sql',
  'graphql',
  'gql',
  'proto',
  'sh',
  'bash',
  'zsh',
  'fish',
  'ps1',
  'bat',
  'cmd',
  'el',
  'vim',
  // markup and styles
  'html',
  'htm',
  'xml',
  'svg',
  'css',
  'scss',
  'sass',
  'less',
  'md',
  'mdx',
  'rst',
  'adoc',
  'tex',
  'txt',
  // config and data
  'json',
  'jsonc',
  'json5',
  'yaml',
  'yml',
  'toml',
  'ini',
  'cfg',
  'conf',
  'env',
  'properties',
  'gradle',
  'lock',
  'tf',
  'hcl',
  'nix',
  'bzl',
  'bazel',
  'cmake',
  'mk',
  'csv',
  'tsv',
  'ipynb',
  'dockerfile',
];

export const CitationSide = z.enum(['base', 'head']);
export type CitationSide = z.infer<typeof CitationSide>;

export const Severity = z.enum(['blocker', 'major', 'minor', 'nit']);
export type Severity = z.infer<typeof Severity>;

export const FindingCategory = z.enum(['correctness', 'security', 'performance', 'reliability', 'maintainability', 'testing', 'compatibility', 'accessibility']);
export type FindingCategory = z.infer<typeof FindingCategory>;

/** The kind of model a review harness is: the stem of its review's name. */
export const FindingOrigin = z.enum(['claude', 'codex', 'other']);
export type FindingOrigin = z.infer<typeof FindingOrigin>;
/**
 * Input-only on add_finding: the review that raised a finding, named as its findings file is
 * (`findings/<name>.md`): the model kind, with `-2`, `-3`… when two reviews share a kind. Two
 * reviews of one kind (two Claude seats) are distinct reviews and can concur.
 */
export const ReviewName = z.string().regex(/^(claude|codex|other)(-[2-9]|-[1-9][0-9])?$/, 'a review name: claude, codex or other, with -2, -3… when two reviews share one');
export type ReviewName = z.infer<typeof ReviewName>;
/** The model kind a review name stands for (`codex-2` → `codex`). */
export function reviewKind(name: string): FindingOrigin {
  const stem = name.replace(/-\d+$/, '');
  return stem === 'claude' || stem === 'codex' ? stem : 'other';
}
/**
 * The Flagged compiler scores each finding 0–100 (how much fixing it matters, times how sure the
 * code makes it). One scored under this floor is left out, or folded into the finding it belongs
 * with as a part: low-value findings never reach the board as a pile of their own.
 */
export const FINDING_SCORE_FLOOR = 40;
export const FindingAgreement = z.enum(['concur', 'diverge', 'solo']);
export type FindingAgreement = z.infer<typeof FindingAgreement>;
/** Host-owned, expanded from agreement. A concurrence and a conflict fold to the same tally pair. */
export const Accord = z.enum(['concur', 'split', 'conflict']);
export type Accord = z.infer<typeof Accord>;

/**
 * How a finding's accord reads to a reviewer, given how many models its concurrence tallies: a
 * `split` tallied for one model only means no second model reviewed the change — it reads
 * "solo", never as a disagreement. Every surface (panel, editor threads) shows this word.
 */
export function accordWord(accord: Accord, models: number): 'solo' | Accord {
  return accord === 'split' && models <= 1 ? 'solo' : accord;
}

export const CalloutTone = z.enum(['note', 'warning', 'question', 'remedy']);
export const SpecDelta = z.enum(['added', 'modified', 'removed', 'renamed']);
export const DeltaStamp = z.enum(['new', 'reworked']);
export const OutcomeKind = z.enum(['addressed', 'partial', 'untouched', 'beyond']);
export const Measure = z.enum(['structured', 'reading']);
export type Measure = z.infer<typeof Measure>;
export const ProseRegister = z.enum(['authored', 'transcribed']);
export type ProseRegister = z.infer<typeof ProseRegister>;

// ─── Authored inputs (flat: scalars, string enums, arrays of scalars) ────────────────────────

const text = z.string().min(1);
const markdown = z.string().min(1);
const line = z.number().int().positive();
const ids = z.array(z.string());

/**
 * What a seat may write for each kind, field by field. Tool inputs are these objects (plus
 * parent_id on add, id on update) rendered to JSON Schema. Every field is flat.
 */
export const KIND_INPUTS = {
  section: z.object({
    title: text.describe('A concise label for the section.'),
    body_markdown: markdown.optional().describe('A self-contained opening paragraph (Markdown); shown as the folded preview when the section has no titled children.'),
    source_paths: z.array(z.string()).optional().describe('Repo-relative files this section was read from, in reading order.'),
  }),
  prose: z.object({
    markdown: markdown.describe('Explanation in Markdown. Cite changed lines as repo/relative/path.ext:LINE or :START-END (head side).'),
  }),
  order_step: z.object({
    title: text.describe('What happens at this step, as a short label.'),
    explanation_markdown: markdown.describe('How the state or data moves through this code and why it matters (Markdown).'),
    span: z.string().describe('Id of the code_ref (from cite) this step walks through.'),
  }),
  decision: z.object({
    title: text.describe('A concise heading for the call that was made.'),
    statement: text.describe('The decision, stated plainly.'),
    rationale: text.describe('The benefit or trade-off that justifies it.'),
    alternatives: z.array(z.string().min(1)).describe('Plain text, one sentence per viable road not taken.'),
    evidence: ids.describe('Ids of code_ref elements (from cite) where the decision shows in the change.'),
    inferred: z.boolean().optional().describe('True when the rationale is reconstructed by analysis rather than stated by a source.'),
    source_path: z.string().optional().describe('Repo-relative file that states the decision, when one does.'),
  }),
  finding: z.object({
    severity: Severity.describe('blocker: must not merge; major: should fix before merge; minor: worth fixing; nit: optional polish.'),
    category: FindingCategory,
    title: text.describe('The claim, as one line.'),
    body_markdown: markdown.describe('What goes wrong, for whom, and when.'),
    part_titles: z.array(z.string().min(1)).optional().describe('Subheadings, one per member of the failure (aligned by index with part_bodies).'),
    part_bodies: z.array(z.string().min(1)).optional().describe('One Markdown body per part title (same length as part_titles).'),
    remedy_markdown: markdown.describe('The proposed fix, as an actionable instruction.'),
    anchor: ids.describe('Ids of code_ref elements (from cite) that show the defect; at least one.'),
  }),
  code_ref: z.object({
    path: text.describe('Repo-relative path of a changed file.'),
    side: CitationSide.describe('head for added or kept lines, base for deleted lines.'),
    start_line: line,
    end_line: line,
    label: z.string().optional().describe('A short caption for the code card.'),
  }),
  requirement: z.object({
    title: text,
    shall: text.describe('The normative text, verbatim from its source.'),
    source_path: z.string().optional(),
    source_candidate: z.string().optional().describe('The source heading or identifier the requirement is read from.'),
    source_line: line.optional(),
    trace: ids.optional().describe('Ids of code_ref elements that implement the requirement.'),
    related_files: z.array(z.string()).optional().describe('Repo-relative paths that implement it.'),
    spec_delta: SpecDelta.optional(),
  }),
  scenario: z.object({
    name: text,
    text_markdown: markdown.describe('The scenario as its source writes it.'),
    scenario_condition: z.string().optional().describe('The WHEN half.'),
    scenario_response: z.string().optional().describe('The THEN half (required when scenario_condition is given).'),
  }),
  task: z.object({
    text: text,
    done: z.boolean().describe("The source's own check mark."),
    source_path: z.string().optional(),
    source_line: line.optional(),
  }),
  stat: z.object({
    stat_labels: z.array(z.string().min(1)).describe('Labels, aligned by index with stat_values.'),
    stat_values: z.array(z.string().min(1)).describe('Values, one per label.'),
  }),
  callout: z.object({
    tone: CalloutTone,
    markdown: markdown,
  }),
  noise_member: z.object({}),
  noise_group: z.object({
    title: text,
    reason: text.describe('Why these changed regions are safe to skip.'),
  }),
  round_outcome: z.object({
    ask_id: text,
    outcome: OutcomeKind,
    note: z.string().optional(),
    evidence: ids.optional(),
  }),
} as const satisfies Record<ElementKind, z.ZodObject>;

/** Input-only fields: they ride a call and are expanded by the host, never persisted. */
export const INPUT_ONLY_FIELDS = {
  finding: z.object({
    origin: ReviewName.optional().describe('The review that raised it: its findings file name without .md.'),
    agreement: FindingAgreement.optional().describe('concur: two reviews raised it alike; diverge: two raised it and disagree; solo: one review raised it.'),
    score: z.number().int().min(0).max(100).optional().describe(`Compiler: worth 0-100 (impact times certainty); under ${FINDING_SCORE_FLOOR} is left out or folded into a related finding.`),
  }),
} as const;

/**
 * Reference fields: element ids a field names, and the kinds each may name. Parenting (parent)
 * is separate and always names an earlier element.
 */
export const REFERENCE_FIELDS: Partial<Record<ElementKind, Record<string, { kinds: readonly ElementKind[]; many: boolean }>>> = {
  order_step: { span: { kinds: ['code_ref'], many: false } },
  decision: { evidence: { kinds: ['code_ref'], many: true } },
  finding: { anchor: { kinds: ['code_ref'], many: true } },
  requirement: { trace: { kinds: ['code_ref'], many: true } },
  round_outcome: { evidence: { kinds: ['code_ref'], many: true } },
};

/** Parallel arrays aligned by index: the spine and its companion. */
export const ALIGNED_FIELDS: Partial<Record<ElementKind, ReadonlyArray<{ spine: string; companion: string }>>> = {
  finding: [{ spine: 'part_titles', companion: 'part_bodies' }],
  stat: [{ spine: 'stat_labels', companion: 'stat_values' }],
  scenario: [{ spine: 'scenario_condition', companion: 'scenario_response' }],
};

/**
 * Reader-facing prose fields per kind: what the code-bytes, citation and vocabulary rules read.
 * Ids, paths, enums, numbers and booleans are not prose.
 */
export const PROSE_FIELDS: Partial<Record<ElementKind, readonly string[]>> = {
  section: ['title', 'body_markdown'],
  prose: ['markdown'],
  order_step: ['title', 'explanation_markdown'],
  decision: ['title', 'statement', 'rationale', 'alternatives'],
  finding: ['title', 'body_markdown', 'part_titles', 'part_bodies', 'remedy_markdown'],
  code_ref: ['label'],
  requirement: ['title', 'shall'],
  scenario: ['name', 'text_markdown', 'scenario_condition', 'scenario_response'],
  task: ['text'],
  stat: ['stat_labels', 'stat_values'],
  callout: ['markdown'],
  noise_group: ['title', 'reason'],
  round_outcome: ['note'],
};

/** The document fields a seat writes (set_document); the rest of BoardDocument is host-owned. */
export const DOCUMENT_AUTHORED_FIELDS = ['title', 'intro_markdown'] as const satisfies readonly (keyof BoardDocument)[];

/** Which kinds may parent which. Absent: the kind must be top-level or under a section. */
export const PARENT_KINDS: Record<ElementKind, readonly ElementKind[]> = {
  section: ['section'],
  prose: ['section', 'requirement', 'finding', 'decision'],
  order_step: ['section'],
  decision: ['section'],
  finding: ['section'],
  code_ref: ['section', 'order_step', 'requirement'],
  requirement: ['section'],
  scenario: ['requirement'],
  task: ['section'],
  stat: ['section'],
  callout: ['section', 'finding', 'decision', 'order_step'],
  noise_member: ['noise_group'],
  noise_group: ['section'],
  round_outcome: ['section'],
};

/** Kinds that may sit at the top level (no parent). */
export const TOP_LEVEL_KINDS: readonly ElementKind[] = ['section', 'stat', 'callout', 'code_ref', 'noise_group', 'noise_member', 'prose'];

// ─── Host-owned fields ───────────────────────────────────────────────────────────────────────

export const Concurrence = z.object({ model: z.string(), agree: z.number().int().nonnegative(), total: z.number().int().positive() });

/** Fields only the host writes. They exist on the schema and on no tool input. */
export const HOST_FIELDS = {
  section: z.object({ delta: DeltaStamp.nullable() }),
  finding: z.object({
    status: z.enum(['open', 'resolved', 'dismissed']),
    concurrence: z.array(Concurrence),
    accord: Accord,
  }),
  code_ref: z.object({ patchset_id: z.string(), hunk_ids: z.array(z.string()) }),
  noise_member: z.object({
    path: z.string(),
    side: CitationSide,
    start_line: line,
    end_line: line,
    hunk_id: z.string(),
    verdict: z.literal('noise'),
    judge: z.literal('deterministic'),
  }),
} as const;

/** Every element carries these, written by the host. */
export const ElementBase = z.object({
  id: z.string(),
  parent: z.string().nullable(),
  /** Who wrote it: a model name, `host`, or `assembler`. */
  author: z.string(),
  /**
   * Position in creation order, unique per board. An element a round carried keeps the position
   * it has on its predecessor (host/board/compose.ts), so Map order, not seq, is the board's order.
   */
  seq: z.number().int().nonnegative(),
});

// One explicit schema per kind (a generic helper over the kind union makes the type checker
// build the cross product of every kind's fields).
const base = ElementBase.shape;
export const SectionElement = z.object({ ...base, kind: z.literal('section'), ...KIND_INPUTS.section.shape, ...HOST_FIELDS.section.shape });
export const ProseElement = z.object({ ...base, kind: z.literal('prose'), ...KIND_INPUTS.prose.shape });
export const OrderStepElement = z.object({ ...base, kind: z.literal('order_step'), ...KIND_INPUTS.order_step.shape });
export const DecisionElement = z.object({ ...base, kind: z.literal('decision'), ...KIND_INPUTS.decision.shape });
export const FindingElement = z.object({ ...base, kind: z.literal('finding'), ...KIND_INPUTS.finding.shape, ...HOST_FIELDS.finding.shape });
export const CodeRefElement = z.object({ ...base, kind: z.literal('code_ref'), ...KIND_INPUTS.code_ref.shape, ...HOST_FIELDS.code_ref.shape });
export const RequirementElement = z.object({ ...base, kind: z.literal('requirement'), ...KIND_INPUTS.requirement.shape });
export const ScenarioElement = z.object({ ...base, kind: z.literal('scenario'), ...KIND_INPUTS.scenario.shape });
export const TaskElement = z.object({ ...base, kind: z.literal('task'), ...KIND_INPUTS.task.shape });
export const StatElement = z.object({ ...base, kind: z.literal('stat'), ...KIND_INPUTS.stat.shape });
export const CalloutElement = z.object({ ...base, kind: z.literal('callout'), ...KIND_INPUTS.callout.shape });
export const NoiseMemberElement = z.object({ ...base, kind: z.literal('noise_member'), ...HOST_FIELDS.noise_member.shape });
export const NoiseGroupElement = z.object({ ...base, kind: z.literal('noise_group'), ...KIND_INPUTS.noise_group.shape });
export const RoundOutcomeElement = z.object({ ...base, kind: z.literal('round_outcome'), ...KIND_INPUTS.round_outcome.shape });

export const BoardElement = z.discriminatedUnion('kind', [
  SectionElement,
  ProseElement,
  OrderStepElement,
  DecisionElement,
  FindingElement,
  CodeRefElement,
  RequirementElement,
  ScenarioElement,
  TaskElement,
  StatElement,
  CalloutElement,
  NoiseMemberElement,
  NoiseGroupElement,
  RoundOutcomeElement,
]);
export type BoardElement = z.infer<typeof BoardElement>;
export type ElementOf<K extends ElementKind> = Extract<BoardElement, { kind: K }>;

/** Every field name some element kind has, and the type that field has across the kinds that have it. */
export type ElementFieldName = BoardElement extends infer E ? (E extends unknown ? keyof E : never) : never;
export type ElementFieldValue<K extends string> = BoardElement extends infer E ? (E extends unknown ? (K extends keyof E ? E[K] : never) : never) : never;

/**
 * One field of an element read by name, for code that works across kinds (the kind tables'
 * REFERENCE_FIELDS / PROSE_FIELDS, the rules). A literal name reads as the type the schema gives it
 * (`undefined` when this element's kind lacks it); a name only known at run time reads `unknown`.
 */
export function elementField<K extends ElementFieldName>(element: BoardElement, name: K): ElementFieldValue<K> | undefined;
export function elementField(element: BoardElement, name: string): unknown;
export function elementField(element: BoardElement, name: string): unknown {
  return (element as unknown as Record<string, unknown>)[name];
}

/** The strings of a field that holds a string or a list (a reference field, a prose field): each non-string item is skipped. */
export function elementStrings(element: BoardElement, name: string): string[] {
  const value = elementField(element, name);
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

// ─── Document envelope and board state ──────────────────────────────────────────────────────

export const BoardDocument = z.object({
  /** Authored. */
  title: z.string(),
  /** Authored Markdown: the user-visible change in two short sentences. */
  intro_markdown: z.string(),
  /** Host-owned: Design is structured; the others read as prose. */
  measure: Measure,
  /** Host-owned: a seat's board is authored; the Design assembler's is transcribed. */
  prose_register: ProseRegister,
});
export type BoardDocument = z.infer<typeof BoardDocument>;

export const MEASURE_BY_LENS: Record<Lens, Measure> = {
  design: 'structured',
  sequence: 'reading',
  decisions: 'reading',
  flagged: 'reading',
  noise: 'reading',
};

/** A repair made at the write boundary: recorded, never silent. */
export const ReferenceRepair = z.object({
  element: z.string(),
  field: z.string(),
  from: z.string(),
  to: z.string(),
});
export type ReferenceRepair = z.infer<typeof ReferenceRepair>;

export const BoardStatus = z.enum(['drafting', 'finished', 'absent']);
export type BoardStatus = z.infer<typeof BoardStatus>;

export const BoardMeta = z.object({
  lens: Lens,
  patchsetId: z.string(),
  status: BoardStatus,
  absence: Absence.nullable(),
  /** Revision of the last accepted write (monotonic per board). */
  revision: z.number().int().nonnegative(),
  repairs: z.array(ReferenceRepair),
});
export type BoardMeta = z.infer<typeof BoardMeta>;

// ─── Rules, refusals, finish pointers ───────────────────────────────────────────────────────

export const BOUNDARY_RULES = [
  'kind-allowlist',
  'no-code-bytes',
  'citation-well-formed',
  'citation-resolves',
  'references-resolve',
  'references-acyclic',
  'parent-admissible',
  'aligned-arrays',
  'decision-grounded',
  'finding-anchored',
  'origin-compiled',
  'finding-scored',
  'process-vocabulary',
  'input-shape',
  'host-owned-field',
  'absence-admissible',
] as const;
export const FINISH_RULES = [
  'document-present',
  'material-present',
  'step-reachable',
  'material-reachable',
  'section-preview',
  'design-stats-unique',
  'design-requirement-scenarios',
  'noise-member-grouped',
  'noise-group-reason',
] as const;
export const RuleId = z.enum([...BOUNDARY_RULES, ...FINISH_RULES]);
export type RuleId = z.infer<typeof RuleId>;

/** A boundary refusal: the call created nothing. */
export const Refusal = z.object({
  rule: RuleId,
  /** The input field at fault (`/document/intro_markdown` for the envelope). */
  field: z.string(),
  message: z.string(),
  /** What would be admissible instead. */
  admissible: z.string(),
});
export type Refusal = z.infer<typeof Refusal>;

/** A finish-tier pointer: a rule id, an element reference and one sentence. */
export const FinishPointer = z.object({ rule: RuleId, element: z.string(), sentence: z.string() });
export type FinishPointer = z.infer<typeof FinishPointer>;

// ─── Result caps (every tool result is bounded, with an honest truncation marker) ───────────

export const RESULT_MAX_HELD_IDS = 20;
export const RESULT_MAX_FINISH_POINTERS = 20;
export const RESULT_MAX_VIOLATIONS = 10;
export const RESULT_MAX_REMOVED_IDS = 20;
/** Ceiling on any one tool result's UTF-8 bytes on the 1,252-element board. */
export const RESULT_MAX_BYTES = 4096;
/** write_board payload ceiling, in UTF-8 bytes. */
export const WRITE_BOARD_MAX_BYTES = 1024 * 1024;

// ─── Reading a board back (host/board/read.ts builds it; the webview renders it) ────────────

/** The reader-facing counts a fold line may carry, in display order. */
export const FOLD_COUNT_KEYS = ['findings', 'decisions', 'requirements', 'steps', 'outcomes', 'groups', 'files', 'comments'] as const;
export const FoldCountKey = z.enum(FOLD_COUNT_KEYS);
export type FoldCountKey = z.infer<typeof FoldCountKey>;

/** One count on a fold line: `label` is the reader-facing noun for `count` ("1 finding", "3 changed regions"). */
export const FoldCount = z.object({
  key: FoldCountKey,
  label: z.string(),
  count: z.number().int().positive(),
});
export type FoldCount = z.infer<typeof FoldCount>;

/**
 * A folded section's preview: its titled children's headings, in document order, or else its
 * opening text. The text is stored whole; the UI clamps it to two lines.
 */
export const FoldPreview = z.union([z.array(z.string()), z.object({ text: z.string() })]);
export type FoldPreview = z.infer<typeof FoldPreview>;

export const SectionFold = z.object({
  sectionId: z.string(),
  title: z.string(),
  preview: FoldPreview,
  counts: z.array(FoldCount),
});
export type SectionFold = z.infer<typeof SectionFold>;

/** One lens board as a reader gets it: the document, the element pool in creation order, one fold line per top-level section. */
export const LensBoardView = z.object({
  lens: Lens,
  document: BoardDocument,
  status: BoardStatus,
  absence: Absence.nullable(),
  revision: z.number().int().nonnegative(),
  elements: z.array(BoardElement),
  folds: z.array(SectionFold),
});
export type LensBoardView = z.infer<typeof LensBoardView>;

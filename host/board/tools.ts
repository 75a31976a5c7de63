import { z } from 'zod';
import {
  BoardDocument,
  DOCUMENT_AUTHORED_FIELDS,
  ElementBase,
  HOST_DERIVED_MEMBER_KINDS,
  HOST_FIELDS,
  INPUT_ONLY_FIELDS,
  KIND_INPUTS,
  PARENT_KINDS,
  REFERENCE_FIELDS,
  TOP_LEVEL_KINDS,
  lensAuthoredKinds,
  seatAbsence,
  writesWholeBoard,
  type ElementKind,
  type Lens,
} from '../../protocol/board';
import type { VerbCall } from './state';

/**
 * A lens seat's tool surface, derived from the protocol tables and nothing else: which kinds a
 * lens authors (lensAuthoredKinds), which of those only the host creates
 * (HOST_DERIVED_MEMBER_KINDS), whether the lens admits a seat absence (seatAbsence) and whether it
 * writes its whole board in one call (writesWholeBoard). No list here names a lens.
 *
 * Every input is one flat object of scalars, string enums and arrays of scalars
 * (flatInputViolations proves it), and no input carries a field the host owns.
 */

/** JSON Schema as rendered by z.toJSONSchema (top-level `"type": "object"`). */
export type JsonSchemaObject = { type: 'object'; properties?: Record<string, unknown>; required?: string[] } & Record<string, unknown>;

export type ToolVerb = VerbCall['verb'] | 'write_board';

/** What a tool call becomes: one writer verb, or (write_board) a batch the seat expands. */
export type ToolCall = VerbCall | { verb: 'write_board'; entriesJson: string };

export interface BoardTool {
  name: string;
  description: string;
  /** The input as served to clients: z.toJSONSchema(zod) without the `$schema` line. */
  inputSchema: JsonSchemaObject;
  /** The same input as a strict zod object (unknown keys are refused, not dropped). */
  zod: z.ZodObject;
  verb: ToolVerb;
  /** The element kind an add_/update_ tool writes. */
  kind?: ElementKind;
  toCall(input: Record<string, unknown>): ToolCall;
}

// ─── Host-owned field names ──────────────────────────────────────────────────────────────────

/** Fields the host writes on every element and on the document; never on a tool input. */
const HOST_OWNED_EVERYWHERE: readonly string[] = [
  ...Object.keys(ElementBase.shape).filter((key) => key !== 'id'),
  'kind',
  ...Object.keys(BoardDocument.shape).filter((key) => !(DOCUMENT_AUTHORED_FIELDS as readonly string[]).includes(key)),
];

/**
 * Host-owned field names for a tool writing `kind` (or the document, when kind is absent). `id`
 * is the host's on every create (it mints it); update_ and remove_element name an element by it.
 */
export function hostOwnedFields(kind?: ElementKind, verb?: ToolVerb): string[] {
  const perKind = kind ? Object.keys((HOST_FIELDS as Partial<Record<ElementKind, z.ZodObject>>)[kind]?.shape ?? {}) : [];
  const id = verb === 'add' || verb === 'cite' ? ['id'] : [];
  return [...new Set([...HOST_OWNED_EVERYWHERE, ...perKind, ...id])];
}

/** Every field name the host owns anywhere on a board (element base, document, per-kind host fields). */
export function allHostOwnedFieldNames(): string[] {
  const names = new Set<string>(HOST_OWNED_EVERYWHERE);
  for (const shape of Object.values(HOST_FIELDS)) for (const key of Object.keys(shape.shape)) names.add(key);
  return [...names];
}

// ─── Descriptions ────────────────────────────────────────────────────────────────────────────

/** What an element of each kind is, in a phrase (tool descriptions interpolate it). */
const KIND_NOUN: Record<ElementKind, string> = {
  section: 'a titled section that groups what sits under it',
  prose: 'a Markdown explanation',
  order_step: 'a reading-order step that walks through one cited range',
  decision: 'a recorded judgement call with its rationale, alternatives and evidence',
  finding: 'a defect finding with severity, remedy and anchoring citations',
  code_ref: 'a code card showing one changed line range',
  requirement: 'a requirement read from a specification',
  scenario: "a requirement's scenario",
  task: 'a task row with its check mark',
  stat: 'a row of labelled figures',
  callout: 'a note, warning, question or remedy callout',
  noise_member: 'a changed region the host filed as skippable',
  noise_group: 'a titled group of skippable changed regions with the reason they are safe to skip',
  round_outcome: 'a round outcome',
};

function parentDescription(kind: ElementKind): string {
  const parents = PARENT_KINDS[kind].join(', ');
  return TOP_LEVEL_KINDS.includes(kind)
    ? `Id of the element this one sits under (${parents}); omit to place it at the top level.`
    : `Id of the element this one sits under (${parents}); needed, since ${article(kind)} ${kind} cannot sit at the top level.`;
}

function referenceNote(kind: ElementKind): string {
  const refs = REFERENCE_FIELDS[kind];
  if (!refs) return '';
  const parts = Object.entries(refs).map(([field, rule]) => `${field} takes ${rule.many ? 'ids' : 'an id'} of ${rule.kinds.join('/')} elements`);
  const fromCite = Object.values(refs).every((rule) => rule.kinds.every((k) => k === 'code_ref')) ? ' (cite returns them)' : '';
  return ` ${parts.join('; ')}${fromCite}.`;
}

// ─── Rendering ───────────────────────────────────────────────────────────────────────────────

/** Renders a tool input to the JSON Schema served to clients. */
export function renderInputSchema(schema: z.ZodObject): JsonSchemaObject {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema) as Record<string, unknown>;
  return dropSafeIntegerBounds(rest) as JsonSchemaObject;
}

/** zod states JavaScript's safe-integer bounds on every integer; they teach nothing and cost bytes. */
function dropSafeIntegerBounds(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(dropSafeIntegerBounds);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'maximum' && value === Number.MAX_SAFE_INTEGER) continue;
    if (key === 'minimum' && value === Number.MIN_SAFE_INTEGER) continue;
    out[key] = dropSafeIntegerBounds(value);
  }
  return out;
}

function tool(name: string, description: string, zod: z.ZodObject, verb: ToolVerb, toCall: BoardTool['toCall'], kind?: ElementKind): BoardTool {
  return { name, description, inputSchema: renderInputSchema(zod), zod, verb, ...(kind ? { kind } : {}), toCall };
}

const ID = z.string().min(1);

const DOCUMENT_FIELD_NOTES: Record<(typeof DOCUMENT_AUTHORED_FIELDS)[number], string> = {
  title: 'The board title.',
  intro_markdown: 'Two short sentences of Markdown.',
};

// ─── The derivation ──────────────────────────────────────────────────────────────────────────

/** The tools a lens's seat is served, in a stable order. */
export function buildBoardTools(lens: Lens): BoardTool[] {
  const tools: BoardTool[] = [];
  tools.push(
    tool(
      'set_document',
      "Set the board's title and its introduction: the user-visible change in two short Markdown sentences. Calling it again replaces both.",
      z.strictObject(Object.fromEntries(DOCUMENT_AUTHORED_FIELDS.map((field) => [field, z.string().min(1).describe(DOCUMENT_FIELD_NOTES[field])]))),
      'set_document',
      (input) => ({ verb: 'set_document', input }),
    ),
    tool(
      'cite',
      'Cite a changed line range (1-based, inclusive) of this change. Returns the new code_ref id; pass it in span, evidence, anchor or trace. A range outside the changed regions of that side is refused with the nearest changed range, and nothing is created.',
      z.strictObject({ ...KIND_INPUTS.code_ref.shape }),
      'cite',
      (input) => ({ verb: 'cite', input }),
    ),
  );

  for (const kind of lensAuthoredKinds(lens)) {
    const fields = KIND_INPUTS[kind].shape as Record<string, z.ZodType>;
    const inputOnly = (INPUT_ONLY_FIELDS as Partial<Record<ElementKind, z.ZodObject<Record<string, z.ZodType>>>>)[kind]?.shape ?? {};
    const parentId = z.string().min(1).optional().describe(parentDescription(kind));
    const moveTo = z
      .string()
      .min(1)
      .optional()
      .describe(`Id of the element to move this one under (${PARENT_KINDS[kind].join(', ')}); omit to leave it where it is.`);
    const derived = HOST_DERIVED_MEMBER_KINDS.includes(kind);
    if (!derived) {
      tools.push(
        tool(
          `add_${kind}`,
          `Add ${KIND_NOUN[kind]}. Returns the new element's id.${referenceNote(kind)}`,
          z.strictObject({ ...fields, ...inputOnly, parent_id: parentId }),
          'add',
          (input) => ({ verb: 'add', kind, input }),
          kind,
        ),
      );
    }
    const optional = Object.fromEntries(Object.entries({ ...fields, ...inputOnly }).map(([key, schema]) => [key, schema.optional()]));
    tools.push(
      tool(
        `update_${kind}`,
        derived
          ? `Move a ${kind} (${KIND_NOUN[kind]}; the host creates and removes them, you only place them) under another element with parent_id.`
          : `Change an existing ${kind} by its id: pass only the fields to change; the rest keep their values. parent_id moves it.${referenceNote(kind)}`,
        z.strictObject({ id: ID.describe(`Id of the ${kind} to change.`), ...optional, parent_id: moveTo }),
        'update',
        (input) => ({ verb: 'update', kind, input }),
        kind,
      ),
    );
  }

  tools.push(
    tool(
      'remove_element',
      'Remove an element by id, with everything under it. Returns the removed ids.',
      z.strictObject({ id: ID.describe('Id of the element to remove.') }),
      'remove_element',
      (input) => ({ verb: 'remove_element', input }),
    ),
    tool(
      'finish',
      'Ask the host to settle the board. It answers either settled, or with pointers (rule, element, sentence): answer each with further calls, then call finish again. Writing after finish reopens the board.',
      z.strictObject({}),
      'finish',
      () => ({ verb: 'finish' }),
    ),
  );

  const absence = seatAbsence(lens);
  if (absence) {
    tools.push(
      tool('settle_absent', `Settle this board as absent instead of writing it, for one fixed reason: ${absence.meaning} Use it only when that holds.`, z.strictObject({}), 'settle_absent', () => ({
        verb: 'settle_absent',
      })),
    );
  }

  if (writesWholeBoard(lens)) {
    tools.push(
      tool(
        'write_board',
        'Write the whole board in one call. entries_json is a JSON array of {"tool": "<another tool of yours>", "input": {...}, "local_id": "name"}, applied in order; local_id (optional) names what an entry creates, and that name works wherever an id goes. Refused entries are reported by position, entries naming a refused one are skipped, the rest stay. finish runs when every entry landed.',
        z.strictObject({ entries_json: z.string().min(2).describe('The JSON array of entries, as a string.') }),
        'write_board',
        (input) => ({ verb: 'write_board', entriesJson: String(input.entries_json) }),
      ),
    );
  }

  for (const t of tools) {
    const owned = hostOwnedFields(t.kind, t.verb);
    const leak = Object.keys(t.zod.shape).filter((key) => owned.includes(key));
    if (leak.length > 0) throw new Error(`tool ${t.name} exposes host-owned field(s) ${leak.join(', ')}`);
  }
  return tools;
}

/** Fields that carry an element id on a tool input (parent_id, id, and the kind's reference fields). */
export function idFieldsOf(tool: BoardTool): string[] {
  const refs = tool.kind ? Object.keys(REFERENCE_FIELDS[tool.kind] ?? {}) : [];
  return ['id', 'parent_id', ...refs].filter((field) => field in tool.zod.shape);
}

/** The serving form: what listTools returns and `rennet tools --json` prints. */
export function toolListing(tools: readonly BoardTool[]): Array<{ name: string; description: string; inputSchema: JsonSchemaObject }> {
  return tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema }));
}

// ─── The shape rule ──────────────────────────────────────────────────────────────────────────

const UNION_KEYS = ['anyOf', 'oneOf', 'allOf'] as const;

/**
 * Renders each tool's input to JSON Schema and names every shape a provider may refuse: a schema
 * without top-level `"type": "object"`, a nested object, an array of objects, and a union
 * (anyOf/oneOf/allOf, or a list of types) at any depth.
 */
export function flatInputViolations(tools: readonly Pick<BoardTool, 'name' | 'zod'>[]): string[] {
  const violations: string[] = [];
  for (const t of tools) {
    let schema: Record<string, unknown>;
    try {
      schema = z.toJSONSchema(t.zod) as Record<string, unknown>;
    } catch (error) {
      violations.push(`${t.name}: input does not render to JSON Schema (${(error as Error).message})`);
      continue;
    }
    if (schema.type !== 'object') violations.push(`${t.name}: input has no top-level "type": "object" (type: ${JSON.stringify(schema.type ?? null)})`);
    for (const key of UNION_KEYS) if (key in schema) violations.push(`${t.name}: input is a union (${key}) at the top level`);
    const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
    for (const [field, property] of Object.entries(properties)) walk(t.name, field, property, violations);
  }
  return violations;
}

function walk(toolName: string, field: string, schema: Record<string, unknown>, out: string[]): void {
  for (const key of UNION_KEYS) {
    const branches = schema[key];
    if (Array.isArray(branches)) {
      out.push(`${toolName}: field ${field} is a union (${key})`);
      for (const branch of branches) walk(toolName, field, branch as Record<string, unknown>, out);
    }
  }
  if (Array.isArray(schema.type)) out.push(`${toolName}: field ${field} is a union of types (${schema.type.join(', ')})`);
  if ('$ref' in schema) out.push(`${toolName}: field ${field} is a nested object ($ref)`);
  if (schema.type === 'object' || 'properties' in schema) out.push(`${toolName}: field ${field} is a nested object`);
  if (schema.type === 'array' || 'items' in schema) {
    const items = schema.items;
    if (items && typeof items === 'object' && !Array.isArray(items)) {
      const item = items as Record<string, unknown>;
      if (item.type === 'object' || 'properties' in item) out.push(`${toolName}: field ${field}[] is an array of objects`);
      else walk(toolName, `${field}[]`, item, out);
    } else if (Array.isArray(items) || schema.prefixItems) {
      out.push(`${toolName}: field ${field} is a tuple`);
    }
  }
}

/** "a" or "an" before a kind name. */
function article(word: string): string {
  return /^[aeiou]/i.test(word) ? 'an' : 'a';
}

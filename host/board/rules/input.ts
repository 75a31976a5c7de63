import { z } from 'zod';
import { BoardDocument, DOCUMENT_AUTHORED_FIELDS, ElementBase, HOST_FIELDS, INPUT_ONLY_FIELDS, KIND_INPUTS, type ElementKind } from '../../../protocol/board';
import type { VerbCall } from '../state';

/**
 * A call's input against its strict schema (derived from KIND_INPUTS / INPUT_ONLY_FIELDS /
 * BoardDocument), and plain words for what a field admits.
 */

const ID = z.string().min(1);
export type AnyObject = z.ZodObject;

/** set_document's input: the authored document fields, each a non-empty string. */
const documentInput = z.object(Object.fromEntries(DOCUMENT_AUTHORED_FIELDS.map((f) => [f, z.string().min(1)])));

function inputOnly(kind: ElementKind): AnyObject | undefined {
  return (INPUT_ONLY_FIELDS as Partial<Record<ElementKind, AnyObject>>)[kind];
}

const schemaCache = new Map<string, AnyObject>();
function cached(key: string, build: () => AnyObject): AnyObject {
  let schema = schemaCache.get(key);
  if (!schema) {
    schema = build();
    schemaCache.set(key, schema);
  }
  return schema;
}

/** The strict input schema of a call, or null for verbs that take none. */
export function inputSchemaOf(call: VerbCall): AnyObject | null {
  switch (call.verb) {
    case 'add':
      return cached(`add:${call.kind}`, () => (KIND_INPUTS[call.kind] as AnyObject).extend({ ...(inputOnly(call.kind)?.shape ?? {}), parent_id: ID.optional() }).strict());
    case 'update':
      return cached(`update:${call.kind}`, () =>
        (KIND_INPUTS[call.kind] as AnyObject)
          .partial()
          .extend({ ...(inputOnly(call.kind)?.partial().shape ?? {}), id: ID, parent_id: ID.optional() })
          .strict(),
      );
    case 'cite':
      return cached('cite', () => (KIND_INPUTS.code_ref as AnyObject).strict());
    case 'set_document':
      return cached('set_document', () => documentInput.partial().strict());
    case 'remove_element':
      return cached('remove_element', () => z.object({ id: ID }).strict());
    case 'finish':
    case 'settle_absent':
      return null;
  }
}

type Issue = z.ZodError['issues'][number];
export type ParsedInput = { ok: true; data: Record<string, unknown> } | { ok: false; issues: readonly Issue[] };

/** Parses a call's input against its strict schema. */
export function parseCallInput(call: VerbCall): ParsedInput {
  const schema = inputSchemaOf(call);
  if (!schema) return { ok: true, data: {} };
  const input = 'input' in call && call.input && typeof call.input === 'object' ? call.input : null;
  if (!input) return { ok: false, issues: [{ code: 'invalid_type', expected: 'object', path: [], message: 'the call carries no input object', input: undefined } as unknown as Issue] };
  const result = schema.safeParse(input);
  return result.success ? { ok: true, data: result.data as Record<string, unknown> } : { ok: false, issues: result.error.issues };
}

/** Every field name the host owns anywhere: element base fields, kind, host-owned document fields, per-kind host fields. */
export const HOST_OWNED_FIELD_NAMES: ReadonlySet<string> = new Set([
  ...Object.keys(ElementBase.shape),
  'kind',
  ...Object.keys(BoardDocument.shape).filter((f) => !(DOCUMENT_AUTHORED_FIELDS as readonly string[]).includes(f)),
  ...Object.values(HOST_FIELDS).flatMap((schema) => Object.keys(schema.shape)),
]);

const fieldDescriptions = new Map<string, Record<string, string>>();
/** Plain words for what a field admits, read off the field's JSON Schema. */
export function admissibleFor(call: VerbCall, field: string): string {
  const schema = inputSchemaOf(call);
  if (!schema) return '';
  const key = `${call.verb}:${'kind' in call ? call.kind : ''}`;
  let described = fieldDescriptions.get(key);
  if (!described) {
    const json = z.toJSONSchema(schema, { unrepresentable: 'any' }) as { properties?: Record<string, Record<string, unknown>> };
    described = Object.fromEntries(Object.entries(json.properties ?? {}).map(([name, prop]) => [name, describeJson(prop)]));
    fieldDescriptions.set(key, described);
  }
  return described[field] ?? '';
}

function describeJson(prop: Record<string, unknown>): string {
  if (Array.isArray(prop.enum)) return `one of: ${(prop.enum as unknown[]).map(String).join(', ')}`;
  switch (prop.type) {
    case 'string':
      return typeof prop.minLength === 'number' && prop.minLength > 0 ? 'a non-empty string' : 'a string';
    case 'integer':
      return prop.exclusiveMinimum === 0 || prop.minimum === 1 ? 'a whole number, 1 or more' : 'a whole number';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'true or false';
    case 'array': {
      const items = (prop.items ?? {}) as Record<string, unknown>;
      const item = describeJson(items).replace(/^an? /, '');
      return `a list of ${item.endsWith('s') ? item : `${item}s`}`.replace(/strings?s$/, 'strings');
    }
    default:
      return 'a value of the declared type';
  }
}

export function fieldList(call: VerbCall, except: readonly string[] = []): string {
  const schema = inputSchemaOf(call);
  return schema
    ? Object.keys(schema.shape)
        .filter((f) => !except.includes(f))
        .join(', ')
    : '';
}

export function verbName(call: VerbCall): string {
  return call.verb === 'add' || call.verb === 'update' ? `${call.verb}_${call.kind}` : call.verb;
}

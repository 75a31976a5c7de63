/**
 * Checking what the extension posts: every message passes the contract (ToWebview) before the
 * panel sees it. A generation arrives whole after every write, and its elements and excerpts are
 * almost all of the check's work (jitless zod in the panel: about 10 ms warm and 30–50 ms cold for
 * a 1.3 MB generation), while one write changes one element or a few.
 *
 * So the reader keeps the last generation message it accepted, raw and checked. In the next one,
 * an element or excerpt deep-equal to a raw one it kept gets that one's checked value (the same
 * input through the same schema gives the same result), and only the others are checked: each
 * element with BoardElement, each excerpt with CodeExcerpt, and the message around them with
 * ToWebview itself, its elements and excerpts emptied. Unchanged elements also come out as the
 * same objects as before, which is what lets the views skip them (./share.ts). A message that is
 * mostly new (the first generation, another generation) is checked whole, which is cheaper than
 * one check per element, and kept for the next.
 *
 * That split decides as ToWebview does only while ToWebview checks a generation's elements and
 * excerpts with exactly those schemas, adding no check of its own on them or on what holds them.
 * `SPLIT_HOLDS` verifies that against the schemas when this module loads; where it does not hold
 * (the contract changed), every message is checked whole, as before.
 */
import { BoardElement, CodeExcerpt, GenerationSnapshot, LaneView, LensBoardView, sameJson } from '../protocol';
import { ToWebview } from '../protocol/webview';

export type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

type Issue = { path: ReadonlyArray<PropertyKey>; message: string };

function reasonOf(issues: readonly Issue[]): string {
  return issues.map((issue) => `${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`).join('; ');
}

/** Validate a message from the extension with the ToWebview schema, whole. */
export function parseToWebview(data: unknown): Parsed<ToWebview> {
  const parsed = ToWebview.safeParse(data);
  if (parsed.success) return { ok: true, value: parsed.data };
  return { ok: false, reason: reasonOf(parsed.error.issues) };
}

export interface MessageReader {
  /** Check one message; an accepted generation is kept for the next one. */
  read(data: unknown): Parsed<ToWebview>;
}

const GENERATION = 'rennet/panel/generation';

/** A raw element or excerpt of the last accepted generation and what the check made of it. */
interface Checked {
  raw: unknown;
  value: unknown;
}

interface Kept {
  /** By element id (ids may repeat across lanes, or on a hostile board: every one is a candidate). */
  elements: Map<string, Checked[]>;
  /** By excerpt key. */
  excerpts: Map<string, Checked>;
}

export function createMessageReader(): MessageReader {
  let kept = emptyKept();
  return {
    read(data) {
      if (!SPLIT_HOLDS || !isSplittable(data)) return parseToWebview(data);
      const result = readGeneration(data, kept);
      if (result.kept) kept = result.kept;
      return result.parsed;
    },
  };
}

// ─── The split check of a generation message ───────────────────────────────────────────────

/** A plain object as JSON and structured clone make them (anything else is left to zod whole). */
function isPlain(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

interface GenerationMessage extends Record<string, unknown> {
  snapshot: Record<string, unknown> & { lanes: unknown[] };
}

function isSplittable(data: unknown): data is GenerationMessage {
  return isPlain(data) && data['type'] === GENERATION && isPlain(data['snapshot']) && Array.isArray(data['snapshot']['lanes']);
}

/** The raw elements of a lane whose board is a plain object with an elements array; else null (checked whole). */
function laneElements(lane: unknown): unknown[] | null {
  if (!isPlain(lane) || !isPlain(lane['board'])) return null;
  const elements = lane['board']['elements'];
  return Array.isArray(elements) ? elements : null;
}

function readGeneration(data: GenerationMessage, kept: Kept): { parsed: Parsed<ToWebview>; kept: Kept | null } {
  const snapshot = data.snapshot;
  const lanes = snapshot.lanes.map(laneElements);
  const rawExcerpts = isPlain(snapshot['excerpts']) ? snapshot['excerpts'] : null;
  // As zod's record does, an own `__proto__` key is never taken.
  const excerptKeys = rawExcerpts ? Object.keys(rawExcerpts).filter((key) => key !== '__proto__') : [];

  // What the last accepted generation already checked, found by deep equality of the raw values.
  let total = excerptKeys.length;
  let found = 0;
  const knownElements = lanes.map(
    (raws) =>
      raws?.map((raw) => {
        total++;
        const id = isPlain(raw) && typeof raw['id'] === 'string' ? raw['id'] : '';
        const hit = kept.elements.get(id)?.find((c) => sameJson(c.raw, raw));
        if (hit) found++;
        return hit;
      }) ?? null,
  );
  const knownExcerpts = excerptKeys.map((key) => {
    const before = kept.excerpts.get(key);
    const hit = before && sameJson(before.raw, rawExcerpts?.[key]) ? before : undefined;
    if (hit) found++;
    return hit;
  });

  // Mostly new (the first generation, another one): one check of the whole message is cheaper
  // than one call per element; its result is then kept for the next message.
  if (found * 2 < total) {
    const parsed = parseToWebview(data);
    if (!parsed.ok || parsed.value.type !== GENERATION || parsed.value.snapshot === null) return { parsed, kept: null };
    const generation = parsed.value.snapshot;
    const next = emptyKept();
    lanes.forEach((raws, i) => raws?.forEach((raw, j) => keepElement(next, raw, generation.lanes[i]?.board?.elements[j])));
    for (const key of excerptKeys) next.excerpts.set(key, { raw: rawExcerpts?.[key], value: generation.excerpts[key] });
    return { parsed, kept: next };
  }

  // The message around the elements and excerpts, checked whole by the contract itself.
  const hollow = {
    ...data,
    snapshot: {
      ...snapshot,
      lanes: snapshot.lanes.map((lane, i) => (lanes[i] ? { ...(lane as object), board: { ...(lane as { board: object }).board, elements: [] } } : lane)),
      ...(rawExcerpts ? { excerpts: {} } : {}),
    },
  };
  const envelope = ToWebview.safeParse(hollow);
  const issues: Issue[] = envelope.success ? [] : [...envelope.error.issues];
  const next = emptyKept();
  const checkedLanes = lanes.map((raws, i) =>
    raws === null
      ? null
      : raws.map((raw, j) => {
          const value = knownElements[i]?.[j]?.value ?? check(BoardElement, raw, ['snapshot', 'lanes', i, 'board', 'elements', j], issues);
          keepElement(next, raw, value);
          return value;
        }),
  );
  const checkedExcerpts = excerptKeys.map((key, k): [string, unknown] => {
    const raw = rawExcerpts?.[key];
    const value = knownExcerpts[k]?.value ?? check(CodeExcerpt, raw, ['snapshot', 'excerpts', key], issues);
    next.excerpts.set(key, { raw, value });
    return [key, value];
  });

  if (!envelope.success || issues.length > 0) return { parsed: { ok: false, reason: reasonOf(issues) }, kept: null };
  const message = envelope.data as Extract<ToWebview, { type: typeof GENERATION }>;
  const generation = message.snapshot as GenerationSnapshot;
  generation.lanes.forEach((lane, i) => {
    const elements = checkedLanes[i];
    if (elements && lane.board) lane.board.elements = elements as BoardElement[];
  });
  if (rawExcerpts) generation.excerpts = Object.fromEntries(checkedExcerpts) as GenerationSnapshot['excerpts'];
  return { parsed: { ok: true, value: message }, kept: next };
}

function emptyKept(): Kept {
  return { elements: new Map(), excerpts: new Map() };
}

function keepElement(kept: Kept, raw: unknown, value: unknown): void {
  const id = isPlain(raw) && typeof raw['id'] === 'string' ? raw['id'] : '';
  const list = kept.elements.get(id);
  if (list) list.push({ raw, value });
  else kept.elements.set(id, [{ raw, value }]);
}

/** `raw` checked with `schema`; its issues are added under `path`. The value only counts without issues. */
function check(schema: typeof BoardElement | typeof CodeExcerpt, raw: unknown, path: readonly PropertyKey[], issues: Issue[]): unknown {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues) issues.push({ ...issue, path: [...path, ...issue.path] });
  return undefined;
}

// ─── Whether the split decides as the contract does ────────────────────────────────────────

interface SchemaDef {
  type?: string;
  checks?: readonly unknown[];
  catchall?: unknown;
  shape?: Record<string, unknown>;
  innerType?: unknown;
  element?: unknown;
  keyType?: unknown;
  valueType?: unknown;
  options?: readonly unknown[];
  values?: readonly unknown[];
}

function defOf(schema: unknown): SchemaDef {
  return (schema as { _zod?: { def?: SchemaDef } } | null)?._zod?.def ?? {};
}

/** A schema of this zod type with no checks (refinements, size limits) of its own. */
function bare(schema: unknown, type: string): boolean {
  const def = defOf(schema);
  return def.type === type && (def.checks?.length ?? 0) === 0;
}

/** A plain object schema (unknown keys stripped, no checks) whose `key` is `child`. */
function field(schema: unknown, key: string): unknown {
  const def = defOf(schema);
  return bare(schema, 'object') && def.catchall === undefined ? def.shape?.[key] : undefined;
}

/**
 * ToWebview's generation message is `{ type, snapshot: GenerationSnapshot | null }`, and in it
 * lanes are `LaneView[]`, a lane's board `LensBoardView | null`, a board's elements
 * `BoardElement[]` and the excerpts `Record<string, CodeExcerpt>`, with no other check on any of
 * these containers.
 */
export function splitHolds(): boolean {
  const arm = defOf(ToWebview).options?.find((option) => defOf(field(option, 'type')).values?.includes(GENERATION));
  const snapshot = field(arm, 'snapshot');
  const lanes = field(GenerationSnapshot, 'lanes');
  const board = field(LaneView, 'board');
  const elements = field(LensBoardView, 'elements');
  const excerpts = field(GenerationSnapshot, 'excerpts');
  return (
    bare(ToWebview, 'union') &&
    bare(snapshot, 'nullable') &&
    defOf(snapshot).innerType === GenerationSnapshot &&
    bare(lanes, 'array') &&
    defOf(lanes).element === LaneView &&
    bare(board, 'nullable') &&
    defOf(board).innerType === LensBoardView &&
    bare(elements, 'array') &&
    defOf(elements).element === BoardElement &&
    bare(excerpts, 'record') &&
    bare(defOf(excerpts).keyType, 'string') &&
    defOf(excerpts).valueType === CodeExcerpt
  );
}

export const SPLIT_HOLDS = splitHolds();

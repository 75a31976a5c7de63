import type { z } from 'zod';
import {
  HOST_DERIVED_MEMBER_KINDS,
  LENS_TYPED_KINDS,
  RESULT_MAX_BYTES,
  RESULT_MAX_VIOLATIONS,
  WRITE_BOARD_MAX_BYTES,
  type BoardDocument,
  type BoardElement,
  CORE_LENSES,
  type Lens,
  type Refusal,
} from '../../protocol/board';
import type { Patchset } from '../../protocol/patchset';
import { deriveNoiseMembers, type CoreLaneOutcomes } from './noise';
import { boundedList, formatCount, moreMarker, renderRefusal, renderResult } from './render';
import { emptyBoard, type BoardState, type VerbCall, type VerbResult, type WriterContext } from './state';
import { allHostOwnedFieldNames, buildBoardTools, hostOwnedFields, idFieldsOf, type BoardTool } from './tools';
import { applyVerb, placeNoiseMembers } from './writer';

/**
 * One seat's board: the state, the writer context, and the seat's tool surface. Every tool call —
 * from the MCP server or from a harness with its own tool loop — goes through `call`, which
 * validates the input with the tool's zod object, turns it into a writer verb, applies it, and
 * renders the bounded text result the seat reads.
 */

/** One accepted write, for progressive readers (the board panel, the store). */
export interface SeatFrame {
  lens: Lens;
  revision: number;
  /** Element ids the write created, changed or removed; `/document` for the envelope. */
  touched: string[];
  state: BoardState;
}

/** A call naming no tool of this seat. */
export interface UnknownToolResult {
  status: 'unknown-tool';
  tool: string;
  refusals: readonly Refusal[];
}

/** write_board's per-entry answer. Positions are indexes into the entries array. */
export interface WriteBoardResult {
  status: 'batch';
  entries: number;
  applied: number[];
  refused: Array<{ position: number; tool: string; result: VerbResult | UnknownToolResult }>;
  /** Entries not applied because they name (through local_id) an entry that was refused or skipped. */
  skipped: Array<{ position: number; tool: string; names: string[] }>;
  /** local_id → the id the host minted for it. */
  ids: Record<string, string>;
  /** The automatic finish (only when every entry landed). */
  finish: VerbResult | null;
  /** A refusal of the payload as a whole: nothing was applied. */
  payload: Refusal | null;
}

export type SeatResult = VerbResult | UnknownToolResult | WriteBoardResult;

export interface SeatCallOutcome {
  text: string;
  result: SeatResult;
  isError: boolean;
}

export interface BoardSnapshot {
  lens: Lens;
  patchsetId: string;
  document: BoardDocument;
  status: BoardState['status'];
  absence: BoardState['absence'];
  revision: number;
  elements: BoardElement[];
  repairs: BoardState['repairs'];
  lastFinish: BoardState['lastFinish'];
}

export interface SeatStats {
  calls: number;
  /** Calls answered with isError. */
  refusals: number;
  byTool: Record<string, { calls: number; refusals: number }>;
}

export interface BoardSeatOptions {
  state: BoardState;
  context: WriterContext;
  onFrame?: (frame: SeatFrame) => void;
}

export class BoardSeat {
  readonly lens: Lens;
  readonly tools: readonly BoardTool[];
  private readonly byName: ReadonlyMap<string, BoardTool>;
  private current: BoardState;
  private readonly context: WriterContext;
  private readonly listeners = new Set<(frame: SeatFrame) => void>();
  private readonly counters: SeatStats = { calls: 0, refusals: 0, byTool: {} };

  constructor(options: BoardSeatOptions) {
    this.lens = options.state.lens;
    this.tools = buildBoardTools(this.lens);
    this.byName = new Map(this.tools.map((t) => [t.name, t]));
    this.current = options.state;
    this.context = options.context;
    if (options.onFrame) this.listeners.add(options.onFrame);
  }

  get state(): BoardState {
    return this.current;
  }

  /** Subscribes to accepted writes; returns the unsubscribe function. */
  onFrame(listener: (frame: SeatFrame) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  stats(): SeatStats {
    return { calls: this.counters.calls, refusals: this.counters.refusals, byTool: structuredClone(this.counters.byTool) };
  }

  /** One tool call, as a seat makes it. Never throws on bad input: bad input is a refusal. */
  call(toolName: string, input: unknown): SeatCallOutcome {
    const tool = this.byName.get(toolName);
    const outcome = tool ? (tool.verb === 'write_board' ? this.writeBoard(tool, input) : this.single(tool, input).outcome) : unknownTool(toolName, this.tools);
    this.counters.calls++;
    const per = (this.counters.byTool[toolName] ??= { calls: 0, refusals: 0 });
    per.calls++;
    if (outcome.isError) {
      this.counters.refusals++;
      per.refusals++;
    }
    return outcome;
  }

  snapshot(): BoardSnapshot {
    const s = this.current;
    return {
      lens: s.lens,
      patchsetId: s.patchsetId,
      document: s.document,
      status: s.status,
      absence: s.absence,
      revision: s.revision,
      elements: [...s.elements.values()],
      repairs: s.repairs,
      lastFinish: s.lastFinish,
    };
  }

  // ─── One verb ────────────────────────────────────────────────────────────────────────────

  private single(tool: BoardTool, input: unknown): { outcome: SeatCallOutcome; result: VerbResult } {
    const verb = tool.verb as VerbCall['verb']; // write_board never reaches here: writeBoard expands it
    const parsed = parseInput(tool, input);
    if (!parsed.ok) {
      const result: VerbResult = { status: 'refused', verb, refusals: parsed.refusals };
      return { outcome: { text: renderResult(result), result, isError: true }, result };
    }
    const call = tool.toCall(parsed.value) as VerbCall;
    const before = this.current;
    const { state, result } = applyVerb(before, call, this.context);
    this.current = state;
    if ((result.status === 'accepted' || result.status === 'settled') && state !== before) this.emit(before, state, call, result);
    return { outcome: { text: renderResult(result), result, isError: result.status === 'refused' }, result };
  }

  private emit(before: BoardState, after: BoardState, call: VerbCall, result: VerbResult): void {
    if (this.listeners.size === 0) return;
    const frame: SeatFrame = { lens: this.lens, revision: after.revision, touched: touchedIds(before, after, call, result), state: after };
    for (const listener of this.listeners) {
      try {
        listener(frame);
      } catch {
        // An observer's failure is its own; the write already landed.
      }
    }
  }

  // ─── write_board ─────────────────────────────────────────────────────────────────────────

  private writeBoard(tool: BoardTool, input: unknown): SeatCallOutcome {
    const batch: WriteBoardResult = { status: 'batch', entries: 0, applied: [], refused: [], skipped: [], ids: {}, finish: null, payload: null };
    const parsed = parseInput(tool, input);
    const payloadRefusal = (message: string, admissible: string): SeatCallOutcome => {
      batch.payload = { rule: 'input-shape', field: 'entries_json', message, admissible };
      return { text: renderBatch(batch), result: batch, isError: true };
    };
    if (!parsed.ok) {
      batch.payload = parsed.refusals[0] ?? null;
      return { text: renderBatch(batch), result: batch, isError: true };
    }
    const call = tool.toCall(parsed.value);
    const json = call.verb === 'write_board' ? call.entriesJson : '';
    const bytes = Buffer.byteLength(json, 'utf8');
    if (bytes > WRITE_BOARD_MAX_BYTES) {
      return payloadRefusal(`entries_json is ${bytes} bytes, over the ${WRITE_BOARD_MAX_BYTES}-byte ceiling`, 'split the board over several write_board calls');
    }
    let entries: unknown;
    try {
      entries = JSON.parse(json);
    } catch (error) {
      return payloadRefusal(`entries_json is not valid JSON (${(error as Error).message})`, 'a JSON array of {"tool", "input", "local_id"?} objects');
    }
    if (!Array.isArray(entries)) {
      return payloadRefusal('entries_json is not a JSON array', 'a JSON array of {"tool", "input", "local_id"?} objects');
    }
    batch.entries = entries.length;

    const names = new Map<string, string>();
    const dead = new Set<string>();
    let lastApplied: { tool: string; result: VerbResult } | null = null;
    entries.forEach((raw, position) => {
      const shape = entryShape(raw, position, this.byName, tool.name);
      if (!shape.ok) {
        batch.refused.push({ position, tool: shape.tool, result: shape.result });
        if (shape.localId) dead.add(shape.localId);
        return;
      }
      const { entryTool, entryInput, localId } = shape;
      if (localId !== undefined && (names.has(localId) || dead.has(localId) || this.current.elements.has(localId))) {
        const result: VerbResult = {
          status: 'refused',
          verb: entryTool.verb as VerbCall['verb'],
          refusals: [
            {
              rule: 'input-shape',
              field: `entries[${position}].local_id`,
              message: `local_id "${localId}" is already ${this.current.elements.has(localId) ? 'an element id on this board' : 'used by an earlier entry'}`,
              admissible: 'a name no other entry uses and no element id',
            },
          ],
        };
        batch.refused.push({ position, tool: entryTool.name, result });
        return;
      }
      const idFields = idFieldsOf(entryTool);
      const hungOn = namesIn(entryInput, idFields).filter((name) => dead.has(name));
      if (hungOn.length > 0) {
        batch.skipped.push({ position, tool: entryTool.name, names: hungOn });
        if (localId !== undefined) dead.add(localId);
        return;
      }
      const resolved = resolveNames(entryInput, idFields, names);
      const { outcome, result } = this.single(entryTool, resolved);
      if (outcome.isError) {
        batch.refused.push({ position, tool: entryTool.name, result });
        if (localId !== undefined) dead.add(localId);
        return;
      }
      batch.applied.push(position);
      lastApplied = { tool: entryTool.name, result };
      if (localId !== undefined) {
        const minted = result.status === 'accepted' ? result.id : null;
        if (minted) {
          names.set(localId, minted);
          batch.ids[localId] = minted;
        }
      }
    });

    const everyEntryLanded = batch.refused.length === 0 && batch.skipped.length === 0;
    if (everyEntryLanded) {
      const last = lastApplied as { tool: string; result: VerbResult } | null;
      const finishTool = this.byName.get('finish');
      if (last && last.tool === 'finish') batch.finish = last.result;
      else if (finishTool) batch.finish = this.single(finishTool, {}).result;
    }
    const isError = !everyEntryLanded || batch.finish?.status === 'refused';
    return { text: renderBatch(batch), result: batch, isError };
  }
}

/**
 * A drafting board for a seat, created before the seat runs. A lens whose board holds
 * host-derived members (Noise) gets them placed first: the complement of what the core lanes
 * cited. With no core lanes given (a standalone seat server), nothing is cited, so every captured
 * hunk is a member.
 */
export function openDraftingBoard(lens: Lens, patchset: Patchset, context: WriterContext, coreLanes?: CoreLaneOutcomes): BoardState {
  const board = emptyBoard(lens, patchset.id);
  if (!LENS_TYPED_KINDS[lens].some((kind) => HOST_DERIVED_MEMBER_KINDS.includes(kind))) return board;
  const lanes = coreLanes ?? (Object.fromEntries(CORE_LENSES.map((l) => [l, { kind: 'settled', citedHunkIds: new Set<string>() }])) as unknown as CoreLaneOutcomes);
  const derived = deriveNoiseMembers(patchset, lanes);
  if (derived.kind !== 'members') return board;
  const placed = placeNoiseMembers(board, derived.members, context);
  if (placed.result.status === 'refused') throw new Error(`could not place the derived members: ${renderResult(placed.result)}`);
  return placed.state;
}

// ─── Input validation ──────────────────────────────────────────────────────────────────────

type Parsed = { ok: true; value: Record<string, unknown> } | { ok: false; refusals: Refusal[] };

/** Validates a tool input with the tool's zod object; a failure names each field (at most ten). */
export function parseInput(tool: BoardTool, input: unknown): Parsed {
  const value = input === undefined || input === null ? {} : input;
  const result = tool.zod.safeParse(value);
  if (result.success) return { ok: true, value: result.data as Record<string, unknown> };
  // An unknown key the host writes anywhere (verdict, author, …) is named as host-owned.
  const owned = new Set([...allHostOwnedFieldNames(), ...hostOwnedFields(tool.kind, tool.verb)]);
  const refusals: Refusal[] = [];
  for (const issue of result.error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        refusals.push(
          owned.has(key)
            ? {
                rule: 'host-owned-field',
                field: key,
                message: `${key} is written by the host, not by a call`,
                admissible: key === 'parent' ? 'parent_id to place the element' : key === 'id' ? 'no id: the host mints it and returns it' : `omit ${key}; ${tool.name} takes: ${fieldList(tool)}`,
              }
            : { rule: 'input-shape', field: key, message: `${tool.name} has no field ${key.slice(0, 40)}`, admissible: `only these fields: ${fieldList(tool)}` },
        );
      }
      continue;
    }
    const field = issue.path.map(String).join('.') || '(input)';
    const missing = issue.code === 'invalid_type' && issue.input === undefined && issue.path.length > 0;
    refusals.push({ rule: 'input-shape', field, message: missing ? `${field} is required and missing` : issue.message, admissible: admissibleFor(tool, issue) });
  }
  // The rendered text lists at most RESULT_MAX_VIOLATIONS of them and counts the rest.
  return { ok: false, refusals };
}

function fieldList(tool: BoardTool): string {
  const keys = Object.keys(tool.zod.shape);
  return keys.length === 0 ? '(none: call it with {})' : keys.join(', ');
}

function admissibleFor(tool: BoardTool, issue: z.core.$ZodIssue): string {
  const top = issue.path[0];
  const property = typeof top === 'string' ? (tool.inputSchema.properties?.[top] as Record<string, unknown> | undefined) : undefined;
  if (!property) return `an object with ${fieldList(tool)}`;
  const required = tool.inputSchema.required?.includes(top as string) ? 'required' : 'optional';
  if (Array.isArray(property.enum)) return `one of ${property.enum.map((v) => JSON.stringify(v)).join(', ')} (${required})`;
  const type =
    property.type === 'array'
      ? `an array of ${String((property.items as Record<string, unknown> | undefined)?.type ?? 'values')}s`
      : `a${property.type === 'integer' ? 'n' : ''} ${String(property.type)}`;
  const extra = property.type === 'integer' && 'exclusiveMinimum' in property ? ' ≥ 1' : property.minLength ? ', not empty' : '';
  return `${type}${extra} (${required})`;
}

// ─── write_board helpers ───────────────────────────────────────────────────────────────────

type EntryShape =
  | { ok: true; entryTool: BoardTool; entryInput: Record<string, unknown>; localId: string | undefined }
  | { ok: false; tool: string; result: VerbResult | UnknownToolResult; localId: string | undefined };

const ENTRY_KEYS = ['tool', 'input', 'local_id'];

function entryShape(raw: unknown, position: number, tools: ReadonlyMap<string, BoardTool>, self: string): EntryShape {
  const at = `entries[${position}]`;
  const refuse = (tool: string, field: string, message: string, admissible: string, localId?: string): EntryShape => ({
    ok: false,
    tool,
    localId,
    result: { status: 'unknown-tool', tool, refusals: [{ rule: 'input-shape', field: `${at}${field}`, message, admissible }] },
  });
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return refuse('?', '', `${at} is not an object.`, '{"tool": "<name>", "input": {...}, "local_id"?: "name"}');
  const entry = raw as Record<string, unknown>;
  const localId = typeof entry.local_id === 'string' && entry.local_id.length > 0 ? entry.local_id : undefined;
  const name = typeof entry.tool === 'string' ? entry.tool : '?';
  const extra = Object.keys(entry).filter((key) => !ENTRY_KEYS.includes(key));
  if (extra.length > 0) return refuse(name, `.${extra[0]}`, `${at} has an unknown key ${extra.join(', ')}.`, 'tool, input, local_id', localId);
  if (entry.local_id !== undefined && localId === undefined) return refuse(name, '.local_id', 'local_id must be a non-empty string.', 'a name such as "g1"');
  const entryTool = tools.get(name);
  if (!entryTool || name === self) {
    const names = [...tools.keys()].filter((n) => n !== self).join(', ');
    return refuse(name, '.tool', `${at} names ${name === self ? 'write_board itself' : `no tool "${name}" of this seat`}.`, names, localId);
  }
  const input = entry.input ?? {};
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return refuse(name, '.input', `${at}.input is not an object.`, "the tool's input object", localId);
  return { ok: true, entryTool, entryInput: input as Record<string, unknown>, localId };
}

function namesIn(input: Record<string, unknown>, fields: readonly string[]): string[] {
  const out: string[] = [];
  for (const field of fields) {
    const value = input[field];
    if (typeof value === 'string') out.push(value);
    else if (Array.isArray(value)) for (const item of value) if (typeof item === 'string') out.push(item);
  }
  return out;
}

function resolveNames(input: Record<string, unknown>, fields: readonly string[], names: ReadonlyMap<string, string>): Record<string, unknown> {
  if (names.size === 0) return input;
  const out: Record<string, unknown> = { ...input };
  for (const field of fields) {
    const value = out[field];
    if (typeof value === 'string') out[field] = names.get(value) ?? value;
    else if (Array.isArray(value)) out[field] = (value as unknown[]).map((item) => (typeof item === 'string' ? (names.get(item) ?? item) : item));
  }
  return out;
}

// ─── Rendering seat-level results ───────────────────────────────────────────────────────────

function unknownTool(name: string, tools: readonly BoardTool[]): SeatCallOutcome {
  const result: UnknownToolResult = {
    status: 'unknown-tool',
    tool: name,
    refusals: [{ rule: 'input-shape', field: '(tool)', message: `this seat has no tool "${name}"`, admissible: `one of ${tools.map((t) => t.name).join(', ')}` }],
  };
  return { text: renderRefusals(result.refusals), result, isError: true };
}

function renderRefusals(refusals: readonly Refusal[], nothing = 'Nothing was created.'): string {
  return `${refusals.map(renderRefusal).join('\n')} ${nothing}`;
}

const MAX_LISTED = 20;
const ENTRY_TEXT_CHARS = 240;

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function entryText(result: VerbResult | UnknownToolResult): string {
  return result.status === 'unknown-tool' ? renderRefusals(result.refusals) : renderResult(result);
}

/** write_board's answer: counts first, then bounded samples, always ≤ RESULT_MAX_BYTES. */
export function renderBatch(batch: WriteBoardResult): string {
  if (batch.payload) return renderRefusals([batch.payload], 'Nothing was applied.');
  const lines: string[] = [
    `write_board: ${formatCount(batch.entries)} entries; ${formatCount(batch.applied.length)} applied, ${formatCount(batch.refused.length)} refused, ${formatCount(batch.skipped.length)} skipped (they name a refused entry).`,
  ];
  if (batch.refused.length > 0) {
    lines.push(`Refused (positions are indexes into the array; these created nothing):`);
    // Entries refused for the same reason are one line naming their positions.
    const byText = new Map<string, number[]>();
    for (const r of batch.refused) {
      const key = `${r.tool}: ${oneLine(entryText(r.result), ENTRY_TEXT_CHARS)}`;
      const positions = byText.get(key);
      if (positions) positions.push(r.position);
      else byText.set(key, [r.position]);
    }
    const groups = [...byText.entries()];
    for (const [text, positions] of groups.slice(0, RESULT_MAX_VIOLATIONS)) {
      const where =
        positions.length === 1
          ? `entries[${positions[0]}]`
          : `entries ${boundedList(
              positions.map((p) => `[${p}]`),
              MAX_LISTED,
            )} (${formatCount(positions.length)} entries)`;
      lines.push(`- ${where} ${text}`);
    }
    if (groups.length > RESULT_MAX_VIOLATIONS) {
      const hidden = groups.slice(RESULT_MAX_VIOLATIONS).reduce((n, [, positions]) => n + positions.length, 0);
      lines.push(`- ${moreMarker(hidden)} refused entries, for ${formatCount(groups.length - RESULT_MAX_VIOLATIONS)} other reasons`);
    }
  }
  if (batch.skipped.length > 0) {
    const skipped = batch.skipped.map((s) => `entries[${s.position}] ${s.tool} (names ${s.names.join(', ')})`);
    lines.push(`Skipped, not applied: ${boundedList(skipped, MAX_LISTED, '; ')}.`);
  }
  const ids = Object.entries(batch.ids);
  if (ids.length > 0) {
    lines.push(
      `Ids minted: ${boundedList(
        ids.map(([name, id]) => `${name}=${id}`),
        MAX_LISTED,
      )}.`,
    );
  }
  if (batch.finish) lines.push(`finish: ${renderResult(batch.finish)}`);
  else lines.push('finish did not run, because not every entry landed. Everything applied stays on the board: fix the refused and skipped entries, then call finish.');
  return capBytes(lines.join('\n'), RESULT_MAX_BYTES);
}

function capBytes(text: string, max: number): string {
  if (Buffer.byteLength(text, 'utf8') <= max) return text;
  const marker = '\n…[truncated to the result limit]';
  let cut = text.slice(0, max - marker.length);
  while (Buffer.byteLength(cut + marker, 'utf8') > max) cut = cut.slice(0, -16);
  return cut + marker;
}

// ─── Frames ──────────────────────────────────────────────────────────────────────────────────

/** Which ids a write touched: created, changed (by identity) or removed; `/document` for the envelope. */
export function touchedIds(before: BoardState, after: BoardState, call: VerbCall, result: VerbResult): string[] {
  const touched = new Set<string>();
  if (before.document !== after.document) touched.add('/document');
  if (before.elements !== after.elements) {
    for (const [id, element] of after.elements) if (before.elements.get(id) !== element) touched.add(id);
    for (const id of before.elements.keys()) if (!after.elements.has(id)) touched.add(id);
  }
  if (result.status === 'accepted') {
    if (result.id) touched.add(result.id);
    for (const id of result.removed ?? []) touched.add(id);
  }
  if (call.verb === 'update' && typeof call.input.id === 'string' && after.elements.has(call.input.id)) touched.add(call.input.id);
  return [...touched];
}

import {
  DOCUMENT_AUTHORED_FIELDS,
  FindingOrigin,
  HOST_DERIVED_MEMBER_KINDS,
  HOST_ONLY_KINDS,
  RESULT_MAX_HELD_IDS,
  lensAuthoredKinds,
  reviewKind,
  seatAbsence,
  type Refusal,
} from '../../../protocol/board';
import { clip } from '../prose';
import { boundedList, formatCount } from '../render';
import { HOST_AUTHOR, type BoundaryRule } from './context';
import { type ParsedInput, HOST_OWNED_FIELD_NAMES, admissibleFor, fieldList, verbName } from './input';
import { refusal } from './reading';

/** Boundary rules on the call's shape: the kinds a lens writes, host-owned fields, the input schema, a seat absence. */

const kindAllowlist: BoundaryRule = {
  id: 'kind-allowlist',
  tier: 'boundary',
  summary:
    'A lens writes only its own kinds (LENS_TYPED_KINDS + SHARED_AUTHORING_KINDS); host-derived members and host-only kinds are written by no verb; settle_absent exists only where the lens admits a seat absence.',
  onCall({ state, call }) {
    const authored = lensAuthoredKinds(state.lens);
    const palette = `one of the kinds this board takes: ${authored.filter((k) => !HOST_DERIVED_MEMBER_KINDS.includes(k)).join(', ')}`;
    if (call.verb === 'add' || call.verb === 'update') {
      const kind = call.kind;
      if (HOST_ONLY_KINDS.includes(kind) || !authored.includes(kind)) {
        return [refusal('kind-allowlist', 'kind', `a ${state.lens} board does not take ${kind} elements`, palette)];
      }
      if (call.verb === 'add' && HOST_DERIVED_MEMBER_KINDS.includes(kind)) {
        return [refusal('kind-allowlist', 'kind', `${kind} elements are placed by the host from the change itself; no call creates one`, `update_${kind} to place an existing one under a parent`)];
      }
    }
    if (call.verb === 'cite' && !authored.includes('code_ref')) {
      return [refusal('kind-allowlist', 'kind', `a ${state.lens} board does not take code_ref elements`, palette)];
    }
    if (call.verb === 'settle_absent' && !seatAbsence(state.lens)) {
      return [refusal('kind-allowlist', 'settle_absent', `a ${state.lens} board admits no absence its writer may declare`, 'write the board and call finish')];
    }
    return [];
  },
  onElements({ state, removed }) {
    if (!removed) return [];
    const protectedIds: string[] = [];
    for (const id of removed) {
      const el = state.elements.get(id);
      if (el && (HOST_DERIVED_MEMBER_KINDS.includes(el.kind) || HOST_ONLY_KINDS.includes(el.kind))) protectedIds.push(id);
    }
    if (protectedIds.length === 0) return [];
    return [
      refusal(
        'kind-allowlist',
        'id',
        `removing it would remove ${formatCount(protectedIds.length)} host-placed element${protectedIds.length === 1 ? '' : 's'} (${boundedList(protectedIds, RESULT_MAX_HELD_IDS)}), and no call removes those`,
        'move them elsewhere with their update verb first, or remove a different element',
      ),
    ];
  },
};

function unknownKeys(parsed: ParsedInput): string[] {
  if (parsed.ok) return [];
  return parsed.issues.flatMap((issue) => (issue.code === 'unrecognized_keys' ? (issue as { keys: string[] }).keys : []));
}

const hostOwnedField: BoundaryRule = {
  id: 'host-owned-field',
  tier: 'boundary',
  summary: 'No input carries a field the host owns (author, status, accord, patchset_id, verdict, judge, delta, measure, …).',
  onCall({ call, parsed }) {
    return unknownKeys(parsed)
      .filter((key) => HOST_OWNED_FIELD_NAMES.has(key))
      .map((key) =>
        refusal(
          'host-owned-field',
          key,
          `${key} is written by the host, not by a call`,
          key === 'parent' ? 'parent_id to place the element' : key === 'id' ? 'no id: the host mints it and returns it' : `omit ${key}; ${verbName(call)} takes: ${fieldList(call)}`,
        ),
      );
  },
};

const inputShape: BoundaryRule = {
  id: 'input-shape',
  tier: 'boundary',
  summary: 'The input parses against the kind’s flat input schema (KIND_INPUTS + INPUT_ONLY_FIELDS); unknown fields are refused by name.',
  onCall({ call, parsed, ctx }) {
    const out: Refusal[] = [];
    if (!parsed.ok) {
      for (const issue of parsed.issues) {
        if (issue.code === 'unrecognized_keys') {
          for (const key of (issue as { keys: string[] }).keys) {
            if (HOST_OWNED_FIELD_NAMES.has(key)) continue;
            out.push(refusal('input-shape', key, `${verbName(call)} has no field ${clip(key, 40)}`, `only these fields: ${fieldList(call)}`));
          }
          continue;
        }
        const name = issue.path.map(String).join('.') || '(input)';
        const top = String(issue.path[0] ?? '');
        const missing = issue.code === 'invalid_type' && (issue as { input?: unknown }).input === undefined && issue.path.length > 0;
        out.push(refusal('input-shape', name, missing ? `${name} is required and missing` : issue.message, admissibleFor(call, top) || `the input of ${verbName(call)}`));
      }
      return out;
    }
    if (call.verb === 'set_document' && DOCUMENT_AUTHORED_FIELDS.every((f) => !(f in parsed.data))) {
      out.push(refusal('input-shape', '(input)', 'set_document names no field', `at least one of: ${DOCUMENT_AUTHORED_FIELDS.join(', ')}`));
    }
    if (call.verb === 'update' && Object.keys(parsed.data).every((f) => f === 'id')) {
      out.push(refusal('input-shape', '(input)', `update_${call.kind} names no field to change`, `id plus at least one of: ${fieldList(call, ['id'])}`));
    }
    // Where the compiled reviews are known, origin-compiled pairs them; elsewhere a concurrence
    // pairs the two model kinds, so a review of neither kind has no pair.
    if ((call.verb === 'add' || call.verb === 'update') && call.kind === 'finding' && !ctx.reviewedBy) {
      const origin = parsed.data.origin as string | undefined;
      const agreement = parsed.data.agreement as string | undefined;
      const paired = FindingOrigin.options.filter((o) => o !== 'other');
      if (agreement && agreement !== 'solo' && origin && !paired.includes(reviewKind(origin) as (typeof paired)[number])) {
        out.push(refusal('input-shape', 'agreement', `agreement ${agreement} needs a second model, and origin ${origin} has no pair`, `origin ${paired.join(' or ')}, or agreement solo`));
      }
    }
    return out;
  },
};

const absenceAdmissible: BoundaryRule = {
  id: 'absence-admissible',
  tier: 'boundary',
  summary: 'settle_absent settles only a board its writer has not written on: an absence claims there is nothing here.',
  onCall({ state, call }) {
    if (call.verb !== 'settle_absent' || !seatAbsence(state.lens)) return [];
    const written: string[] = [];
    for (const el of state.elements.values()) if (el.author !== HOST_AUTHOR) written.push(el.id);
    if (written.length === 0) return [];
    return [
      refusal(
        'absence-admissible',
        'settle_absent',
        `the board holds ${formatCount(written.length)} written element${written.length === 1 ? '' : 's'} (${boundedList(written, RESULT_MAX_HELD_IDS)}), so it is not absent`,
        'call finish to settle what is written, or remove those elements first',
      ),
    ];
  },
};

/** The call-shape rules, in registry order (BOUNDARY_TIER in index.ts). */
export const CALL_SHAPE_RULES: readonly BoundaryRule[] = [kindAllowlist, hostOwnedField, inputShape, absenceAdmissible];

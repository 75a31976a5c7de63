import {
  DOCUMENT_AUTHORED_FIELDS,
  elementField,
  HOST_DERIVED_MEMBER_KINDS,
  KIND_INPUTS,
  LENS_TYPED_KINDS,
  MEASURE_BY_LENS,
  type BoardElement,
  type ElementKind,
  type FinishPointer,
  type Lens,
} from '../../../protocol/board';
import { clip } from '../prose';
import type { BoardState } from '../state';
import type { FinishRuleId, FinishRule } from './context';
import type { AnyObject } from './input';

/** The finish tier: rules that need the whole board and answer finish with pointers. */

function pointer(rule: FinishRuleId, element: string, sentence: string): FinishPointer {
  return { rule, element, sentence };
}

/** True when the element's parent chain ends at a top-level section (every link present). */
function reachesTopSection(state: BoardState, el: BoardElement): boolean {
  const seen = new Set<string>();
  let at: BoardElement | undefined = el;
  while (at && at.parent !== null) {
    if (seen.has(at.id)) return false;
    seen.add(at.id);
    at = state.elements.get(at.parent);
  }
  return !!at && at !== el && at.kind === 'section';
}

/** The kinds whose presence counts as a lens's material (structured boards may be an overview: any element). */
export function materialKinds(lens: Lens): readonly ElementKind[] | 'any' {
  if (MEASURE_BY_LENS[lens] === 'structured') return 'any';
  return LENS_TYPED_KINDS[lens].filter((k) => !HOST_DERIVED_MEMBER_KINDS.includes(k));
}

function titled(el: BoardElement): boolean {
  if (!('title' in (KIND_INPUTS[el.kind] as AnyObject).shape)) return false;
  const title = elementField(el, 'title');
  return typeof title === 'string' && title.trim() !== '';
}

function childrenIndex(state: BoardState): Map<string, BoardElement[]> {
  const children = new Map<string, BoardElement[]>();
  for (const el of state.elements.values()) {
    if (el.parent === null) continue;
    const list = children.get(el.parent);
    if (list) list.push(el);
    else children.set(el.parent, [el]);
  }
  return children;
}

const documentPresent: FinishRule = {
  id: 'document-present',
  tier: 'finish',
  summary: 'The document has a title and an introduction.',
  check(state) {
    const missing = DOCUMENT_AUTHORED_FIELDS.filter((f) => state.document[f].trim() === '');
    if (missing.length === 0) return [];
    return [pointer('document-present', '/document', `The document has no ${missing.join(' and no ')}; set it with set_document.`)];
  },
};

const materialPresent: FinishRule = {
  id: 'material-present',
  tier: 'finish',
  summary: 'The board holds its lens’s material at all (Sequence an order_step, Decisions a decision, Flagged a finding, Noise a group, Design any element); reachability is answered separately.',
  check(state) {
    const kinds = materialKinds(state.lens);
    if (kinds === 'any') {
      return state.elements.size > 0 ? [] : [pointer('material-present', '/document', 'The board holds no element; write its content, or settle it absent if the lens admits that.')];
    }
    for (const el of state.elements.values()) if (kinds.includes(el.kind)) return [];
    return [pointer('material-present', '/document', `The board holds no ${kinds.join(' or ')}, which is what it exists to show.`)];
  },
};

const stepReachable: FinishRule = {
  id: 'step-reachable',
  tier: 'finish',
  summary: 'Every order_step is reachable from a top-level section through its parents.',
  check(state) {
    const out: FinishPointer[] = [];
    for (const el of state.elements.values()) {
      if (el.kind === 'order_step' && !reachesTopSection(state, el))
        out.push(pointer('step-reachable', el.id, `Step ${el.id} is not reachable from a top-level section; re-parent it under one with update_order_step.`));
    }
    return out;
  },
};

const materialReachable: FinishRule = {
  id: 'material-reachable',
  tier: 'finish',
  summary: 'Every decision and finding sits under a top-level section.',
  check(state) {
    const out: FinishPointer[] = [];
    for (const el of state.elements.values()) {
      if ((el.kind === 'decision' || el.kind === 'finding') && !reachesTopSection(state, el)) {
        out.push(pointer('material-reachable', el.id, `This ${el.kind} is not under a top-level section, so no reader reaches it; re-parent it with update_${el.kind}.`));
      }
    }
    return out;
  },
};

const sectionPreview: FinishRule = {
  id: 'section-preview',
  tier: 'finish',
  summary: 'Every section has a folded preview: a titled child or its own body_markdown.',
  check(state) {
    const children = childrenIndex(state);
    const out: FinishPointer[] = [];
    for (const el of state.elements.values()) {
      if (el.kind !== 'section') continue;
      const body = elementField(el, 'body_markdown');
      if (typeof body === 'string' && body.trim() !== '') continue;
      if ((children.get(el.id) ?? []).some(titled)) continue;
      out.push(pointer('section-preview', el.id, 'This section has no titled child and no body_markdown, so it folds to nothing; give it an opening paragraph or titled children.'));
    }
    return out;
  },
};

const designStatsUnique: FinishRule = {
  id: 'design-stats-unique',
  tier: 'finish',
  summary: 'A stat label appears once across the board.',
  check(state) {
    const firstSeen = new Map<string, string>();
    const out: FinishPointer[] = [];
    for (const el of state.elements.values()) {
      if (el.kind !== 'stat') continue;
      const reported = new Set<string>();
      for (const label of elementField(el, 'stat_labels') ?? []) {
        const key = label.trim().toLowerCase();
        const earlier = firstSeen.get(key);
        if (earlier === undefined) firstSeen.set(key, el.id);
        else if (!reported.has(key)) {
          reported.add(key);
          out.push(pointer('design-stats-unique', el.id, `The stat label "${clip(label, 40)}" already appears on ${earlier}; keep one.`));
        }
      }
    }
    return out;
  },
};

const designRequirementScenarios: FinishRule = {
  id: 'design-requirement-scenarios',
  tier: 'finish',
  summary: 'Every requirement carries its shall text, and every scenario sits under a requirement.',
  check(state) {
    const out: FinishPointer[] = [];
    for (const el of state.elements.values()) {
      if (el.kind === 'requirement' && (elementField(el, 'shall') ?? '').trim() === '') {
        out.push(pointer('design-requirement-scenarios', el.id, 'This requirement has no shall text; quote its normative sentence.'));
      } else if (el.kind === 'scenario' && (el.parent === null || state.elements.get(el.parent)?.kind !== 'requirement')) {
        out.push(pointer('design-requirement-scenarios', el.id, 'This scenario is not under a requirement; re-parent it under the requirement it illustrates.'));
      }
    }
    return out;
  },
};

const noiseMemberGrouped: FinishRule = {
  id: 'noise-member-grouped',
  tier: 'finish',
  summary: 'Every noise_member is parented to a noise_group.',
  check(state) {
    const out: FinishPointer[] = [];
    for (const el of state.elements.values()) {
      if (el.kind !== 'noise_member') continue;
      const parentKind: ElementKind | undefined = el.parent === null ? undefined : state.elements.get(el.parent)?.kind;
      if (parentKind !== 'noise_group') out.push(pointer('noise-member-grouped', el.id, 'This changed region is in no group; place it under a noise_group with update_noise_member.'));
    }
    return out;
  },
};

const noiseGroupReason: FinishRule = {
  id: 'noise-group-reason',
  tier: 'finish',
  summary: 'Every noise_group has a non-empty reason and at least one member.',
  check(state) {
    const children = childrenIndex(state);
    const out: FinishPointer[] = [];
    for (const el of state.elements.values()) {
      if (el.kind !== 'noise_group') continue;
      const noReason = (elementField(el, 'reason') ?? '').trim() === '';
      const noMember = !(children.get(el.id) ?? []).some((child) => child.kind === 'noise_member');
      if (!noReason && !noMember) continue;
      const what = noReason && noMember ? 'has no reason and no member' : noReason ? 'has no reason' : 'has no member';
      out.push(pointer('noise-group-reason', el.id, `This group ${what}; give it a reason and place members under it, or remove it.`));
    }
    return out;
  },
};

export const FINISH_TIER: readonly FinishRule[] = [
  documentPresent,
  materialPresent,
  stepReachable,
  materialReachable,
  sectionPreview,
  designStatsUnique,
  designRequirementScenarios,
  noiseMemberGrouped,
  noiseGroupReason,
];

import { FINDING_SCORE_FLOOR, elementField, type Accord, type FindingAgreement, type Refusal } from '../../../protocol/board';
import { clip } from '../prose';
import type { BoundaryRule } from './context';
import { refusal } from './reading';

/** Boundary rules on decisions and findings: grounded, anchored, attributed to compiled reviews, scored. */

const ELEMENT_ID_SHAPE = /^e\d+$/;

const decisionGrounded: BoundaryRule = {
  id: 'decision-grounded',
  tier: 'boundary',
  summary: 'A decision carries non-empty evidence and at least one plain-text alternative (a sentence, not an id).',
  onElements({ touched, next }) {
    const out: Refusal[] = [];
    for (const t of touched) {
      if (t.element.kind !== 'decision') continue;
      const evidence = elementField(t.element, 'evidence') ?? [];
      const alternatives = elementField(t.element, 'alternatives') ?? [];
      if (evidence.length === 0)
        out.push(refusal('decision-grounded', 'evidence', 'a decision with no evidence is not grounded in the change', 'at least one code_ref id (cite returns one) where the decision shows'));
      const prose = alternatives.filter((a) => a.trim() !== '');
      if (prose.length === 0) out.push(refusal('decision-grounded', 'alternatives', 'a decision needs at least one road not taken', 'one plain sentence per viable alternative'));
      alternatives.forEach((a, i) => {
        const trimmed = a.trim();
        if (ELEMENT_ID_SHAPE.test(trimmed) || next.elements.has(trimmed)) {
          out.push(refusal('decision-grounded', `alternatives[${i}]`, `${clip(trimmed, 20)} is an element id, and alternatives are plain text`, 'one plain sentence per viable alternative'));
        }
      });
    }
    return out;
  },
};

const findingAnchored: BoundaryRule = {
  id: 'finding-anchored',
  tier: 'boundary',
  summary: 'A finding carries at least one anchor (a code_ref id).',
  onElements({ touched }) {
    return touched
      .filter((t) => t.element.kind === 'finding' && (elementField(t.element, 'anchor') ?? []).length === 0)
      .map(() => refusal('finding-anchored', 'anchor', 'a finding with no anchor points at no code', 'at least one code_ref id (cite returns one) showing the defect'));
  },
};

/** The agreement a finding was written with, read back from the accord it expanded into. */
export const AGREEMENT_OF_ACCORD: Readonly<Record<Accord, FindingAgreement>> = { split: 'solo', concur: 'concur', conflict: 'diverge' };

/** What ran, in words: "only the claude review was compiled", "the claude and claude-2 reviews were compiled". */
export function compiledReviewsText(reviewedBy: readonly string[]): string {
  const names = [...new Set(reviewedBy)];
  if (names.length === 0) return 'no review was compiled';
  if (names.length === 1) return `only the ${names[0]} review was compiled`;
  return `the ${names.slice(0, -1).join(', ')} and ${names.at(-1)} reviews were compiled`;
}

/**
 * A compiler's agreement marks become the tallies a reader trusts ("claude 1/1, codex 1/1"), so
 * they must be facts about the reviews this generation compiled, not the compiler's say-so. Only
 * checked where the seat's reviews are known (the pipeline's Flagged compiler). Reviews pair by
 * name, not by model kind: two Claude reviews are two reviews.
 */
const originCompiled: BoundaryRule = {
  id: 'origin-compiled',
  tier: 'boundary',
  summary: 'Where the reviews a seat compiles are known (the Flagged compiler), a finding’s origin names one of them, and concur/diverge only when a second review was compiled.',
  onElements({ touched, ctx }) {
    const reviewedBy = ctx.reviewedBy;
    if (!reviewedBy) return [];
    const compiled = new Set<string>(reviewedBy);
    const ran = compiledReviewsText(reviewedBy);
    const names = [...compiled];
    const out: Refusal[] = [];
    for (const t of touched) {
      if (t.element.kind !== 'finding') continue;
      if (!t.created && !t.named.has('origin') && !t.named.has('agreement')) continue;
      const origin = t.element.author;
      if (!compiled.has(origin)) {
        const said = t.named.has('origin')
          ? `origin ${clip(origin, 40)} names a review that was not compiled`
          : `the finding names no origin, so it would be attributed to ${clip(origin, 40)}, which is not a compiled review`;
        out.push(
          refusal('origin-compiled', 'origin', `${said}; ${ran}`, names.length > 0 ? `origin ${names.join(' or ')}: the review that raised it` : 'no finding: there is no review to attribute it to'),
        );
      }
      const accord = elementField(t.element, 'accord') ?? 'split';
      if (accord === 'split') continue;
      const pair = elementField(t.element, 'concurrence')?.[1]?.model ?? 'other';
      if (compiled.has(origin) && compiled.has(pair) && pair !== origin) continue;
      out.push(refusal('origin-compiled', 'agreement', `agreement ${AGREEMENT_OF_ACCORD[accord]} says a second review raised it too, and ${ran}; a finding can only be solo`, 'agreement solo'));
    }
    return out;
  },
};

/** Section titles that name a severity or a leftover pile, not an area of the change. */
const PILE_TITLE =
  /^(nits?|nitpicks?|minor|minor (issues|findings|nits|points)|polish|style|style (issues|nits)|misc\.?|miscellaneous|other|other (issues|findings)|low[- ]priority( issues| findings)?|optional|suggestions)$/i;

/**
 * The Flagged compiler scores every finding it writes, and one under FINDING_SCORE_FLOOR does not
 * reach the board: it is left out, or folded into the finding it belongs with as a part. Nor do
 * low-value findings gather under a section of their own: sections name areas of the change.
 */
const findingScored: BoundaryRule = {
  id: 'finding-scored',
  tier: 'boundary',
  summary: `Where the seat compiles reviews (the Flagged compiler), each added finding carries a score, none under ${FINDING_SCORE_FLOOR}, and no section is a pile of nits.`,
  onCall({ call, parsed, ctx }) {
    if (!ctx.reviewedBy || !parsed.ok) return [];
    if ((call.verb === 'add' || call.verb === 'update') && call.kind === 'finding') {
      const score = parsed.data.score as number | undefined;
      if (score === undefined && call.verb === 'add') {
        return [
          refusal('finding-scored', 'score', 'the finding carries no score', `score 0-100: how much fixing it matters times how sure the code makes it; under ${FINDING_SCORE_FLOOR}, leave it out`),
        ];
      }
      if (score !== undefined && score < FINDING_SCORE_FLOOR) {
        return [
          refusal(
            'finding-scored',
            'score',
            `score ${score} is under the floor of ${FINDING_SCORE_FLOOR}: a finding worth this little does not go on the board`,
            'leave it out, or add it as a part (part_titles, part_bodies) of the finding it belongs with',
          ),
        ];
      }
    }
    if ((call.verb === 'add' || call.verb === 'update') && call.kind === 'section') {
      const title = parsed.data.title as string | undefined;
      if (title !== undefined && PILE_TITLE.test(title.trim())) {
        return [
          refusal(
            'finding-scored',
            'title',
            `section "${clip(title.trim(), 40)}" gathers findings by how little they matter`,
            'a section named for the area of the change its findings concern; a low-value finding is left out or folded into another',
          ),
        ];
      }
    }
    return [];
  },
};

/** The decision and finding rules, in registry order (BOUNDARY_TIER in index.ts). */
export const FINDING_RULES: readonly BoundaryRule[] = [decisionGrounded, findingAnchored, originCompiled, findingScored];

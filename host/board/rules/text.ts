import { elementField, type BoardElement, type Refusal } from '../../../protocol/board';
import { clip, codeRegions, findCodeBytes, findProcessVocabulary, findProseCitations, isChangeVocabulary } from '../prose';
import type { CitationIndexLike } from '../state';
import type { BoundaryRule } from './context';
import { writtenProse, isTranscribed, knowledgeOf, refusal } from './reading';

/** Boundary rules on authored text: no code bytes, well-formed citations that resolve, no process vocabulary. */

const noCodeBytes: BoundaryRule = {
  id: 'no-code-bytes',
  tier: 'boundary',
  summary:
    'Prose carries no code bytes (fenced, indented, or inline spans that are not identifier-like); code on a board is a code_ref. In the transcribed register an inline span is the source’s own inline formatting and passes; code blocks do not.',
  onElements(c) {
    const out: Refusal[] = [];
    // Transcribed prose quotes the project's artifacts with their inline formatting; only a code
    // block there is code carried as bytes. The register drops no rule: this one still screens it.
    const transcribed = isTranscribed(c.next);
    for (const { field: name, text } of writtenProse(c)) {
      const found = findCodeBytes(text).filter((bytes) => !(transcribed && bytes.kind === 'inline'));
      if (found.length === 0) continue;
      const first = found[0]!;
      const what = first.kind === 'inline' ? `an inline code span (\`${first.excerpt}\`) that is code, not a name` : `a ${first.kind} code block (${first.excerpt || 'empty'})`;
      out.push(
        refusal(
          'no-code-bytes',
          name,
          `it carries ${what}${found.length > 1 ? ` and ${found.length - 1} more` : ''}`,
          'describe the code in prose and show it with a code_ref (cite); backticks are for identifiers, paths and ids',
        ),
      );
    }
    return out;
  },
};

const PROBLEM_WORDS: Record<string, string> = {
  absolute: 'is an absolute path',
  'home-rooted': 'is rooted at ~',
  'github-anchor': 'uses the #L line-anchor form',
  'bare-basename': 'is a bare file name that is not a changed file at the repository root',
  'not-canonical': 'is not written from the repository root',
  backslash: 'uses backslashes',
  'bad-range': 'is not a 1-based range with start ≤ end',
};

function codeRefPathProblem(path: string): string | null {
  if (path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path)) return 'is an absolute path';
  if (path.startsWith('~')) return 'is rooted at ~';
  if (path.includes('\\')) return 'uses backslashes';
  if (/#L\d/.test(path)) return 'carries a #L line anchor';
  if (/^\.\.?\//.test(path) || path.includes('/./') || path.includes('/../') || path.includes('//')) return 'is not written from the repository root';
  return null;
}

const citationWellFormed: BoundaryRule = {
  id: 'citation-well-formed',
  tier: 'boundary',
  summary: 'A path:line in prose (left side ending in a source/config/markup extension) and every code_ref are repo-relative with a 1-based start ≤ end.',
  onElements(c) {
    const out: Refusal[] = [];
    if (!isTranscribed(c.next)) {
      const knowledge = knowledgeOf(c.ctx.citations);
      for (const { field: name, text } of writtenProse(c)) {
        for (const cite of findProseCitations(text, knowledge, codeRegions(text))) {
          if (!cite.problem) continue;
          out.push(
            refusal(
              'citation-well-formed',
              name,
              `${clip(cite.raw, 80)} ${PROBLEM_WORDS[cite.problem] ?? 'is not a repo-relative citation'}, so a reader cannot resolve it`,
              cite.advice ?? 'a repo-relative path:line',
            ),
          );
        }
      }
    }
    for (const t of c.touched) {
      if (t.element.kind !== 'code_ref') continue;
      const path = elementField(t.element, 'path') ?? '';
      // A path the change itself names is well formed however it reads (`~notes.md`, `a\b.txt`, `x#L1.md` are legal git paths).
      const problem = c.ctx.citations.hasPath?.(path) ? null : codeRefPathProblem(path);
      if (problem) out.push(refusal('citation-well-formed', 'path', `${clip(path, 80)} ${problem}`, 'the repo-relative path exactly as the change names it, e.g. src/app.ts'));
      const start = elementField(t.element, 'start_line') ?? 0;
      const end = elementField(t.element, 'end_line') ?? 0;
      if (end < start) out.push(refusal('citation-well-formed', 'end_line', `end_line ${end} is before start_line ${start}`, `end_line ≥ start_line (${start})`));
    }
    return out;
  },
};

const CITE_ADVICE = 'cite lines inside a hunk, or cite the base side for deleted lines';

/** Resolves a code_ref's range; the same predicate the writer uses to stamp hunk_ids. */
export function resolveCodeRef(el: BoardElement, index: CitationIndexLike) {
  return index.resolve(elementField(el, 'path') ?? '', elementField(el, 'side') ?? 'head', elementField(el, 'start_line') ?? 0, elementField(el, 'end_line') ?? 0);
}

const citationResolves: BoundaryRule = {
  id: 'citation-resolves',
  tier: 'boundary',
  summary: 'Every cited line sits inside one captured changed region on the named side (a rename’s base answers to either name; a truncated tail counts); code_refs cite this board’s patchset.',
  onElements(c) {
    const out: Refusal[] = [];
    const index = c.ctx.citations;
    if (!isTranscribed(c.next)) {
      const knowledge = knowledgeOf(index);
      for (const { field: name, text } of writtenProse(c)) {
        for (const cite of findProseCitations(text, knowledge, codeRegions(text))) {
          if (cite.problem) continue;
          const resolution = index.resolve(cite.path, 'head', cite.start, cite.end);
          if (resolution.ok) continue;
          out.push(
            refusal(
              'citation-resolves',
              name,
              `${resolution.message}${resolution.nearest ? `; nearest changed range: ${resolution.nearest}` : ''}`,
              resolution.reason === 'outside-changed-regions'
                ? `${CITE_ADVICE}; prose citations name the head side, so deleted lines need a code_ref with side base`
                : admissibleForReason(resolution.reason),
            ),
          );
        }
      }
    }
    for (const t of c.touched) {
      if (t.element.kind !== 'code_ref') continue;
      if (!t.created && !['path', 'side', 'start_line', 'end_line'].some((f) => t.named.has(f))) continue;
      if (index.patchsetId !== c.next.patchsetId) {
        out.push(
          refusal('citation-resolves', 'path', `the citation index reads patchset ${index.patchsetId}, and this board reads ${c.next.patchsetId}`, 'a citation of the patchset this board reads'),
        );
        continue;
      }
      const start = elementField(t.element, 'start_line') ?? 0;
      const end = elementField(t.element, 'end_line') ?? 0;
      if (end < start) continue; // citation-well-formed answers that
      const resolution = resolveCodeRef(t.element, index);
      if (resolution.ok) continue;
      const at = resolution.reason === 'past-end-of-file' ? 'end_line' : resolution.reason === 'side-absent' ? 'side' : resolution.reason === 'outside-changed-regions' ? 'start_line' : 'path';
      out.push(
        refusal(
          'citation-resolves',
          at,
          `${resolution.message}${resolution.nearest ? `; nearest changed range: ${resolution.nearest}` : ''}`,
          resolution.reason === 'outside-changed-regions' ? CITE_ADVICE : admissibleForReason(resolution.reason),
        ),
      );
    }
    return out;
  },
};

function admissibleForReason(reason: string): string {
  switch (reason) {
    case 'unknown-path':
      return 'a path this change touches, written from the repository root';
    case 'past-end-of-file':
      return 'a range that ends on or before the last line of the file';
    case 'side-absent':
      return 'the side the file has in this change';
    case 'not-line-addressable':
      return 'mention the file by path in prose; it has no lines to cite';
    default:
      return CITE_ADVICE;
  }
}

const processVocabulary: BoundaryRule = {
  id: 'process-vocabulary',
  tier: 'boundary',
  summary:
    "Authored prose names the change, never the review machinery (lenses, boards, agents, seats, drafts); the transcribed register is exempt, and a word the change's own code uses is the change's vocabulary.",
  onElements(c) {
    if (isTranscribed(c.next)) return [];
    const out: Refusal[] = [];
    for (const { field: name, text } of writtenProse(c)) {
      const changeWords = c.ctx.changeWords;
      const hits = findProcessVocabulary(text).filter((h) => !changeWords || !isChangeVocabulary(h.word, changeWords));
      if (hits.length === 0) continue;
      const words = [...new Set(hits.map((h) => `"${clip(h.word, 30)}"`))];
      out.push(
        refusal(
          'process-vocabulary',
          name,
          `${words.slice(0, 3).join(', ')}${words.length > 3 ? ` and ${words.length - 3} more` : ''} name${hits.length === 1 ? 's' : ''} the review process rather than the change`,
          'describe what the code does and why it matters, without naming lenses, boards, agents, seats or drafts',
        ),
      );
    }
    return out;
  },
};

/** The authored-text rules, in registry order (BOUNDARY_TIER in index.ts). */
export const TEXT_RULES: readonly BoundaryRule[] = [noCodeBytes, citationWellFormed, citationResolves, processVocabulary];

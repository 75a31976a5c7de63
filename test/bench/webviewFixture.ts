import { syntheticPatchset } from './boardTools';
import { buildCitationIndex } from '../../host/board/citations';
import { citationMarks } from '../../host/generation/citationMarks';
import { buildExcerpts, type ExcerptSpan } from '../../host/generation/excerpts';
import { GenerationSnapshot, LENSES, PROSE_FIELDS, SessionSnapshot, summarizePatchset, type BoardElement, type ElementOf, type Lens, type LensBoardView, type Patchset } from '../../protocol';
import { boardView, codeRef, designBoard, elements, generation, lane, spend, type ElementInput } from '../unit/webview/boardFixtures';
import { snapshot as sessionSnapshot } from '../unit/webview/fixtures';

/**
 * The generation the webview bench renders: the synthetic 95-file, 1,252-hunk change the host
 * benches use (test/bench/boardTools.ts syntheticPatchset), and five settled lanes whose boards are
 * built with the webview board fixtures (elements, codeRef, boardView → the host's own readBoard,
 * so folds and counts are the ones a panel receives) and cite that change's real regions:
 * - Flagged, the lens a panel opens on: exactly `flaggedElements` elements — sections, prose with
 *   path:line citations, findings anchored to code_refs, callouts;
 * - Sequence: sections, order steps each walking a code_ref, prose, callouts;
 * - Decisions: decisions with two or three evidence code_refs;
 * - Noise: groups of host-placed members over regions nobody else cites;
 * - Design: the fixtures' Design board.
 * Excerpts and citation marks come from the host's own builders over the same patchset. Everything is parsed
 * with the protocol's schemas before it is used, so the page receives what it would accept.
 */

export interface BenchGeneration {
  patchset: Patchset;
  session: SessionSnapshot;
  generation: GenerationSnapshot;
  /** The lens measured (the one a panel shows without a choice) and its board. */
  lens: Lens;
  board: LensBoardView;
  /** Distinct element ids of the measured board once every section is unfolded. */
  elementCount: number;
  /** Distinct element ids its first, folded view shows (top-level sections and loose elements). */
  foldedCount: number;
  /** One plain text row per element of the measured board: its prose fields (the baseline's rows). */
  rows: string[];
  /** A finding of the measured board, for the one-element change. */
  findingId: string;
}

export interface BenchGenerationOptions {
  flaggedElements?: number;
  sequenceElements?: number;
  decisionsElements?: number;
  noiseElements?: number;
}

interface Site {
  path: string;
  start: number;
  end: number;
  hunkId: string;
}

/** Every captured hunk's changed head line (and the one after it), in patchset order. */
function sitesOf(patchset: Patchset): Site[] {
  const out: Site[] = [];
  for (const file of patchset.files) {
    for (const hunk of file.hunks) {
      const changed = hunk.lines.find((line) => line.kind === 'add')?.newLine ?? hunk.newStart;
      out.push({ path: file.path, start: changed, end: changed + 1, hunkId: hunk.id });
    }
  }
  return out;
}

class Cursor {
  private next = 0;
  constructor(private readonly sites: readonly Site[]) {}
  take(): Site {
    const site = this.sites[this.next % this.sites.length] as Site;
    this.next++;
    return site;
  }
}

const cite = (site: Site) => `${site.path}:${site.start}-${site.end}`;
const AREAS = ['Upload retries', 'Session refresh', 'Cache keys', 'Error mapping', 'Request signing', 'Batch writes', 'Config loading', 'Metrics'];
const SEVERITIES = ['blocker', 'major', 'minor', 'nit'] as const;
const CATEGORIES = ['correctness', 'security', 'performance', 'reliability', 'maintainability', 'testing', 'compatibility', 'accessibility'] as const;
const TONES = ['note', 'warning', 'question', 'remedy'] as const;

/** A board pool of exactly `target` elements: `unit` appends one group, `filler` tops it up. */
function pool(target: number, unit: (out: ElementInput[], room: number) => void, filler: (out: ElementInput[]) => ElementInput): ElementInput[] {
  const out: ElementInput[] = [];
  for (;;) {
    const before = out.length;
    unit(out, target - out.length);
    if (out.length === before || out.length >= target) break;
  }
  while (out.length < target) out.push(filler(out));
  return out.slice(0, target);
}

function flaggedPool(target: number, sites: Cursor, patchsetId: string): ElementInput[] {
  let n = 0;
  const id = () => `f${++n}`;
  let section = '';
  let s = 0;
  const ref = (site: Site, label?: string) => codeRef(id(), site.path, site.start, site.end, { patchset_id: patchsetId, hunk_ids: [site.hunkId], ...(label ? { label } : {}) });
  return pool(
    target,
    (out, room) => {
      if (room < 6) return;
      const area = `${AREAS[s % AREAS.length]} ${Math.floor(s / AREAS.length) + 1}`;
      section = id();
      const a = sites.take();
      const b = sites.take();
      out.push({ id: section, kind: 'section', title: area, body_markdown: `What can break in ${area.toLowerCase()}: the changed lines run on every request.`, delta: null });
      out.push({
        id: id(),
        kind: 'prose',
        parent: section,
        markdown: `Both call sites changed together: see ${cite(a)} and ${cite(b)}. The second one runs only when the first has **already failed**.`,
      });
      for (let f = 0; f < 12 && out.length + 3 <= target; f++) {
        const one = sites.take();
        const two = sites.take();
        const anchor = [ref(one, f % 3 === 0 ? 'Where the value is read' : undefined), ref(two)];
        out.push(...anchor);
        const parts = f % 3 === 1;
        out.push({
          id: id(),
          kind: 'finding',
          parent: section,
          author: f % 2 === 0 ? 'claude' : 'codex',
          severity: SEVERITIES[(s + f) % SEVERITIES.length] as (typeof SEVERITIES)[number],
          category: CATEGORIES[(s * 3 + f) % CATEGORIES.length] as (typeof CATEGORIES)[number],
          title: `${area}: the renamed value at ${one.path.split('/').pop()} is read before it is set`,
          body_markdown: `The line at ${cite(one)} reads \`changed\` before \`retry\` assigns it, so a caller that fails fast sees the **old** value. It shows again at ${cite(two)}.`,
          ...(parts ? { part_titles: ['Who is affected', 'When'], part_bodies: ['Every caller of `upload` that retries.', 'Only after the first attempt fails.'] } : {}),
          remedy_markdown: 'Assign the value before the first read, and keep the old name as an alias for one release.',
          anchor: anchor.map((r) => r.id),
          status: 'open',
          concurrence:
            f % 2 === 0
              ? [
                  { model: 'claude', agree: 1, total: 1 },
                  { model: 'codex', agree: 1, total: 1 },
                ]
              : [{ model: 'codex', agree: 1, total: 1 }],
          accord: f % 4 === 0 ? 'concur' : f % 4 === 1 ? 'split' : 'conflict',
        });
      }
      if (out.length < target)
        out.push({ id: id(), kind: 'callout', parent: section, tone: TONES[s % TONES.length] as (typeof TONES)[number], markdown: `Check ${cite(sites.take())} once the fix lands.` });
      s++;
    },
    () => ({ id: id(), kind: 'prose', parent: section, markdown: `One more note: ${cite(sites.take())} repeats the pattern.` }),
  );
}

function sequencePool(target: number, sites: Cursor, patchsetId: string): ElementInput[] {
  let n = 0;
  const id = () => `q${++n}`;
  let section = '';
  let s = 0;
  return pool(
    target,
    (out, room) => {
      if (room < 4) return;
      section = id();
      out.push({ id: section, kind: 'section', title: `Stage ${s + 1}: ${AREAS[s % AREAS.length]}`, body_markdown: 'Follow the value from the caller into the changed module.', delta: null });
      out.push({ id: id(), kind: 'prose', parent: section, markdown: `This stage starts at ${cite(sites.take())} and ends at ${cite(sites.take())}.` });
      for (let k = 0; k < 10 && out.length + 2 <= target; k++) {
        const site = sites.take();
        const span = codeRef(id(), site.path, site.start, site.end, { patchset_id: patchsetId, hunk_ids: [site.hunkId] });
        const step = id();
        out.push(span, {
          id: step,
          kind: 'order_step',
          parent: section,
          title: `The caller reaches ${site.path.split('/').pop()}`,
          explanation_markdown: `The renamed line is what the next step reads; see ${cite(site)}.`,
          span: span.id,
        });
        if (k % 4 === 3 && out.length < target) out.push({ id: id(), kind: 'callout', parent: step, tone: 'question', markdown: 'Does anything still read the old name here?' });
      }
      s++;
    },
    () => ({ id: id(), kind: 'prose', parent: section, markdown: `See also ${cite(sites.take())}.` }),
  );
}

function decisionsPool(target: number, sites: Cursor, patchsetId: string): ElementInput[] {
  let n = 0;
  const id = () => `c${++n}`;
  let section = '';
  let s = 0;
  return pool(
    target,
    (out, room) => {
      if (room < 6) return;
      section = id();
      out.push({ id: section, kind: 'section', title: `${AREAS[s % AREAS.length]} calls`, body_markdown: 'The calls this part of the change makes.', delta: null });
      for (let d = 0; d < 6 && out.length + 4 <= target; d++) {
        const evidence = Array.from({ length: 2 + (d % 2) }, () => {
          const site = sites.take();
          return codeRef(id(), site.path, site.start, site.end, { patchset_id: patchsetId, hunk_ids: [site.hunkId] });
        });
        out.push(...evidence, {
          id: id(),
          kind: 'decision',
          parent: section,
          title: `Rename the value in stage ${d + 1}`,
          statement: 'Lines say what changed instead of keeping the old word.',
          rationale: 'Readers of the logs see the edit; callers that match the old text must move.',
          alternatives: ['Keep the old name and add a comment.', 'Rename only the public entry points.'],
          evidence: evidence.map((e) => e.id),
          inferred: d % 2 === 0,
        });
      }
      s++;
    },
    () => ({ id: id(), kind: 'prose', parent: section, markdown: `Evidence continues at ${cite(sites.take())}.` }),
  );
}

function noisePool(target: number, sites: Cursor): ElementInput[] {
  let n = 0;
  const id = () => `n${++n}`;
  let group = '';
  let g = 0;
  return pool(
    target,
    (out, room) => {
      if (room < 2) return;
      group = id();
      out.push({ id: group, kind: 'noise_group', title: `Mechanical rename ${g + 1}`, reason: 'The same one-line rename, repeated; nothing else moves.' });
      for (let m = 0; m < 14 && out.length < target; m++) {
        const site = sites.take();
        out.push({
          id: id(),
          kind: 'noise_member',
          parent: group,
          author: 'host',
          path: site.path,
          side: 'head',
          start_line: site.start,
          end_line: site.end,
          hunk_id: site.hunkId,
          verdict: 'noise',
          judge: 'deterministic',
        });
      }
      g++;
    },
    () => {
      const site = sites.take();
      return {
        id: id(),
        kind: 'noise_member',
        parent: group,
        author: 'host',
        path: site.path,
        side: 'head',
        start_line: site.start,
        end_line: site.end,
        hunk_id: site.hunkId,
        verdict: 'noise',
        judge: 'deterministic',
      };
    },
  );
}

/** Code refs another element names: the panel shows them at their referrer, not in place. */
function referencedIds(board: LensBoardView): Set<string> {
  const out = new Set<string>();
  for (const e of board.elements) {
    const named = e.kind === 'finding' ? e.anchor : e.kind === 'decision' ? e.evidence : e.kind === 'order_step' ? [e.span] : e.kind === 'requirement' ? (e.trace ?? []) : [];
    for (const ref of named) out.add(ref);
  }
  return out;
}

/** The element's reader-facing text (its prose fields, and a code card's location). */
export function elementText(e: BoardElement): string {
  const parts: string[] = [];
  for (const field of PROSE_FIELDS[e.kind] ?? []) {
    const value = (e as Record<string, unknown>)[field];
    if (typeof value === 'string') parts.push(value);
    else if (Array.isArray(value)) parts.push(...value.filter((v): v is string => typeof v === 'string'));
  }
  if (e.kind === 'code_ref' || e.kind === 'noise_member') parts.push(`${e.path}:${e.start_line}-${e.end_line}`);
  return parts.join(' ');
}

export function benchGeneration(options: BenchGenerationOptions = {}): BenchGeneration {
  const patchset = syntheticPatchset(95, 1252);
  const all = sitesOf(patchset);
  // The core lanes cite from the front of the change, Noise files what lies behind them.
  const cited = new Cursor(all.slice(0, 900));
  const skipped = new Cursor(all.slice(900));
  const boards = new Map<Lens, LensBoardView>([
    ['design', designBoard()],
    [
      'sequence',
      boardView('sequence', elements(sequencePool(options.sequenceElements ?? 300, cited, patchset.id)), {
        title: 'How a request travels',
        intro: 'Follow one request through the renamed lines, stage by stage.',
      }),
    ],
    [
      'decisions',
      boardView('decisions', elements(decisionsPool(options.decisionsElements ?? 150, cited, patchset.id)), { title: 'Calls made in this change', intro: 'One naming call, made module by module.' }),
    ],
    [
      'flagged',
      boardView('flagged', elements(flaggedPool(options.flaggedElements ?? 1000, cited, patchset.id)), {
        title: 'What could go wrong',
        intro: 'Reads before writes, repeated across the modules the rename touched.',
      }),
    ],
    ['noise', boardView('noise', elements(noisePool(options.noiseElements ?? 300, skipped)), { title: 'Safe to skip', intro: 'Changed lines no other reading needs.' })],
  ]);
  const spans: ExcerptSpan[] = [];
  for (const lens of LENSES) {
    for (const e of boards.get(lens)?.elements ?? []) if (e.kind === 'code_ref') spans.push({ path: e.path, side: e.side, startLine: e.start_line, endLine: e.end_line });
  }
  const session = SessionSnapshot.parse(sessionSnapshot({ patchset: summarizePatchset(patchset), sessionId: 'ses-bench' }));
  const lanes = LENSES.map((lens) => lane(lens, 'settled', { board: boards.get(lens) ?? null }));
  const built = GenerationSnapshot.parse(
    generation({
      generationId: 'g-bench00000000001',
      sessionId: session.session.id,
      patchsetId: patchset.id,
      lanes,
      spend: LENSES.map((lens) => spend(lens)),
      // What the host's snapshot reader attaches (host/generation/generationSnapshot.ts), from the same builders.
      excerpts: buildExcerpts(patchset, spans),
      citations: citationMarks(lanes, { citations: buildCitationIndex(patchset) }),
    }),
  );
  const lens: Lens = 'flagged';
  const board = boards.get(lens) as LensBoardView;
  const roots = board.elements.filter((e) => e.parent === null);
  const referenced = referencedIds(board);
  const finding = board.elements.find((e): e is ElementOf<'finding'> => e.kind === 'finding');
  if (!finding) throw new Error('the bench Flagged board has no finding');
  return {
    patchset,
    session,
    generation: built,
    lens,
    board,
    elementCount: new Set(board.elements.map((e) => e.id)).size,
    foldedCount: roots.filter((e) => !referenced.has(e.id)).length,
    rows: board.elements.map(elementText),
    findingId: finding.id,
  };
}

/** The same generation after a seat's write to one element: a finding's title says `marker`. */
export function withChangedFinding(base: GenerationSnapshot, lens: Lens, findingId: string, marker: string): GenerationSnapshot {
  const next = structuredClone(base);
  const board = next.lanes.find((l) => l.lens === lens)?.board;
  const finding = board?.elements.find((e) => e.id === findingId);
  if (!board || !finding || finding.kind !== 'finding') throw new Error(`no finding ${findingId} on the ${lens} board`);
  finding.title = `${finding.title} (${marker})`;
  board.revision += 1;
  return GenerationSnapshot.parse(next);
}

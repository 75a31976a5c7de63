import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { capturePatchset } from '../../../host/capture/capture';
import { openRepo } from '../../../host/capture/repo';
import type { HarnessScript } from '../../../host/harness/scripted';
import type { Clock, Harness, PromptReader, TurnRequest, TurnResult } from '../../../host/pipeline/ports';
import type { LaneChange, PipelineFrame } from '../../../host/pipeline/types';
import { Store } from '../../../host/store';
import type { Patchset } from '../../../protocol/patchset';
import { TestRepo } from '../../fixtures/gitRepo';

/** Shared by the pipeline suites: real temp repositories and captures, a real store, scripted seats. */

export const WASM_PATH = require.resolve('sql.js/dist/sql-wasm.wasm');
export const lines = (n: number, prefix = 'line') => Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}`).join('\n') + '\n';

export class Temp {
  private readonly made: string[] = [];
  dir(prefix = 'rennet-pipeline-'): string {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    this.made.push(dir);
    return dir;
  }
  cleanup(): void {
    for (const dir of this.made.splice(0)) rmSync(dir, { recursive: true, force: true });
  }
}

export async function captureBranch(repo: TestRepo): Promise<Patchset> {
  const handle = await openRepo(repo.dir);
  assert.ok(handle.ok, handle.ok ? '' : handle.error.message);
  const result = await capturePatchset(handle.value, { kind: 'branch', head: 'feature', base: 'main' });
  assert.ok(result.ok, result.ok ? '' : `${result.error.code}: ${result.error.message}`);
  return result.value;
}

/**
 * The code change most suites review: src/app.ts changed at lines 10 and 30 (two hunks),
 * src/util.ts at line 5, docs/notes.md at line 3 — four hunks in all.
 */
export async function codeChange(): Promise<{ repo: TestRepo; patchset: Patchset }> {
  const repo = new TestRepo();
  repo.write('src/app.ts', lines(40)).write('src/util.ts', lines(20, 'util')).write('docs/notes.md', lines(8, 'note')).commit('base');
  repo
    .branch('feature')
    .write('src/app.ts', lines(40).replace('line 10\n', 'line ten\n').replace('line 30\n', 'line thirty\n'))
    .write('src/util.ts', lines(20, 'util').replace('util 5\n', 'UTIL 5\n'))
    .write('docs/notes.md', lines(8, 'note').replace('note 3\n', 'NOTE 3\n'))
    .commit('change');
  const patchset = await captureBranch(repo);
  assert.equal(patchset.totals.hunks, 4);
  return { repo, patchset };
}

/** A change made of specification artifacts only. */
export async function specOnlyChange(): Promise<{ repo: TestRepo; patchset: Patchset }> {
  const repo = new TestRepo();
  repo.write('openspec/changes/add-x/proposal.md', '# Add x\n\n## Why\nold\n').write('src/app.ts', lines(5)).commit('base');
  repo.branch('feature').write('openspec/changes/add-x/proposal.md', '# Add x\n\n## Why\nnew reason\n').commit('spec');
  return { repo, patchset: await captureBranch(repo) };
}

export async function openStore(temp: Temp | string): Promise<Store> {
  return Store.open(typeof temp === 'string' ? temp : temp.dir('rennet-pipeline-store-'), { wasmPath: WASM_PATH });
}

export const T0 = '2026-12-01T10:00:00.000Z';

/** A session for the repo's feature branch, with the patchset stored and attached. */
export function sessionFor(store: Store, repo: TestRepo, patchset: Patchset): string {
  const { session } = store.getOrCreateSession({ repoRoot: repo.dir, target: { kind: 'branch', head: 'feature', base: 'main' }, now: T0 });
  store.putPatchset(patchset);
  store.attachPatchset(session.id, patchset.id, T0);
  return session.id;
}

/** The tiny prompt reader the suites assert against. */
export const testPrompts: PromptReader = {
  seatPrompt: (seat, context) => `PROMPT ${seat.seatId} in ${context.contextDir}`,
  followUpPrompt: (_seat, lastVerdict) => `VERDICT ${lastVerdict ?? '(finish was never called)'}`,
};

/** A clock that advances a millisecond per reading, so every duration is positive and ordered. */
export function tickingClock(start = Date.parse(T0)): Clock {
  let t = start;
  return { now: () => new Date(t++) };
}

export const realClock: Clock = { now: () => new Date() };

// ─── Regions and scripts ────────────────────────────────────────────────────────────────────

export interface Region {
  path: string;
  side: 'base' | 'head';
  start: number;
  end: number;
  hunkId: string;
}

/** One region per hunk: its head side, else its base side. */
export function regionsOf(patchset: Patchset): Region[] {
  const out: Region[] = [];
  for (const file of patchset.files) {
    for (const hunk of file.hunks) {
      const region = file.regions.find((r) => r.hunkId === hunk.id && r.side === 'head') ?? file.regions.find((r) => r.hunkId === hunk.id);
      assert.ok(region, `a region for ${hunk.id}`);
      out.push({ path: file.path, side: region.side, start: region.startLine, end: region.endLine, hunkId: hunk.id });
    }
  }
  return out;
}

type Call = { tool: string; input?: Record<string, unknown>; as?: string };

const doc = (title: string): Call => ({ tool: 'set_document', input: { title, intro_markdown: 'The change renames a few lines. Nothing else moves.' } });
const cites = (regions: readonly Region[], prefix = 'c'): Call[] =>
  regions.map((r, i) => ({ tool: 'cite', input: { path: r.path, side: r.side, start_line: r.start, end_line: r.end }, as: `${prefix}${i}` }));

/** A Design turn that settles: a document and one section. */
export function designTurn(regions: readonly Region[] = []): Call[] {
  return [
    doc('What the change sets out to do'),
    { tool: 'add_section', input: { title: 'Overview', body_markdown: 'The change renames a few lines in two modules.' }, as: 's' },
    ...cites(regions).map((c) => ({ ...c, input: { ...c.input, label: 'renamed line' } })),
    { tool: 'finish' },
  ];
}

/** A Sequence turn citing `regions`, one step each, then finish. */
export function sequenceTurn(regions: readonly Region[], finish = true): Call[] {
  return [
    doc('Reading order'),
    { tool: 'add_section', input: { title: 'Walkthrough', body_markdown: 'Read the renamed lines in order.' }, as: 's' },
    ...cites(regions),
    ...regions.map((_, i) => ({ tool: 'add_order_step', input: { title: `Step ${i + 1}`, explanation_markdown: 'The renamed line is what callers now read.', span: `$c${i}`, parent_id: '$s' } })),
    ...(finish ? [{ tool: 'finish' }] : []),
  ];
}

export function decisionsTurn(regions: readonly Region[]): Call[] {
  return [
    doc('Calls made'),
    { tool: 'add_section', input: { title: 'Naming', body_markdown: 'One naming call shapes the change.' }, as: 's' },
    ...cites(regions),
    {
      tool: 'add_decision',
      input: {
        title: 'Spell the number out',
        statement: 'Lines name their number in words.',
        rationale: 'Words read better in logs.',
        alternatives: ['Keep the digits.'],
        evidence: regions.map((_, i) => `$c${i}`),
        parent_id: '$s',
      },
    },
    { tool: 'finish' },
  ];
}

export interface FindingSpec {
  /** The review that raised it: the compiler may name only an origin whose review it compiles. */
  origin: string;
  agreement: 'concur' | 'diverge' | 'solo';
  title: string;
  /** The compiler's score (finding-scored); 70 when not given. */
  score?: number;
}

/** A Flagged compile turn: one finding per spec, each anchored on the first region. */
export function compileTurn(regions: readonly Region[], findings: readonly FindingSpec[]): Call[] {
  return [
    doc('What could go wrong'),
    { tool: 'add_section', input: { title: 'Correctness', body_markdown: 'Two places where the rename may break callers.' }, as: 's' },
    ...cites(regions),
    ...findings.map((f) => ({
      tool: 'add_finding',
      input: {
        severity: 'minor',
        category: 'correctness',
        title: f.title,
        body_markdown: 'A caller matching the old text stops matching.',
        remedy_markdown: 'Update the caller to the new text.',
        anchor: ['$c0'],
        parent_id: '$s',
        origin: f.origin,
        agreement: f.agreement,
        score: f.score ?? 70,
      },
    })),
    { tool: 'finish' },
  ];
}

export function reviewTurn(text = '# Findings\n\n- src/util.ts:5 renames a line callers match on.\n'): Call[] {
  return [{ tool: 'submit_findings', input: { findings_markdown: text } }];
}

/** A Noise turn grouping members e1…eN in one write_board call (which finishes when every entry lands). */
export function noiseTurn(memberCount: number): Call[] {
  const entries = [
    { tool: 'set_document', input: { title: 'Safe to skip', intro_markdown: 'A renamed note. Nothing here changes behaviour.' } },
    { tool: 'add_noise_group', input: { title: 'Notes', reason: 'Prose in the notes file; no code reads it.' }, local_id: 'g' },
    ...Array.from({ length: memberCount }, (_, i) => ({ tool: 'update_noise_member', input: { id: `e${i + 1}`, parent_id: 'g' } })),
  ];
  return [{ tool: 'write_board', input: { entries_json: JSON.stringify(entries) } }];
}

// ─── Observers ──────────────────────────────────────────────────────────────────────────────

export function observe() {
  const frames: PipelineFrame[] = [];
  const lanes: LaneChange[] = [];
  return {
    frames,
    lanes,
    onFrame: (frame: PipelineFrame) => frames.push(frame),
    onLane: (change: LaneChange) => {
      lanes.push(change);
    },
    statesOf: (lens: string) => lanes.filter((c) => c.lens === lens).map((c) => c.state),
    /** Settlements (settled/absent/failed) in the order they were published. */
    settlements: () => lanes.filter((c) => c.state === 'settled' || c.state === 'absent' || c.state === 'failed').map((c) => c.lens),
  };
}

// ─── Kill simulation ────────────────────────────────────────────────────────────────────────

/**
 * A store that "dies" on kill(): every later call throws, so what is on disk is exactly what was
 * durable at that moment — what kill -9 leaves behind.
 */
export function killable(store: Store, killWhen?: (method: string, args: unknown[]) => boolean): { store: Store; kill(): void; readonly dead: boolean } {
  let dead = false;
  const proxy = new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (!dead && killWhen?.(String(prop), args)) dead = true;
        if (dead) throw new Error('killed');
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return {
    store: proxy,
    kill: () => (dead = true),
    get dead() {
      return dead;
    },
  };
}

/** Holds the turns of the seats `blocked` names until release() (then they fail) or the turn is aborted. */
export class Gate implements Harness {
  readonly kind: string;
  readonly origin: Harness['origin'];
  readonly model: string | null;
  private waiting: Array<() => void> = [];
  readonly held: string[] = [];

  constructor(
    private readonly inner: Harness,
    private readonly blocked: (seatId: string) => boolean,
  ) {
    this.kind = inner.kind;
    this.origin = inner.origin;
    this.model = inner.model;
  }

  async runTurn(request: TurnRequest): Promise<TurnResult> {
    if (!this.blocked(request.seat.seatId)) return this.inner.runTurn(request);
    this.held.push(request.seat.seatId);
    await new Promise<void>((resolve) => {
      this.waiting.push(resolve);
      request.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    return { outcome: 'aborted', message: 'killed', usage: null };
  }

  release(): void {
    for (const resolve of this.waiting.splice(0)) resolve();
  }
}

export async function until(predicate: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const start = Date.now();
  while (!predicate()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * Every lane of codeChange() settles: Design writes a section, Sequence cites app.ts's first hunk,
 * Decisions its second, Flagged (two reviews, one compile) util.ts; Noise groups the notes hunk.
 */
export function fullScriptFor(patchset: Patchset): HarnessScript {
  const [, app1, app2, util] = regionsOf(patchset) as [Region, Region, Region, Region];
  return {
    seats: {
      'design:drafter': { turns: [designTurn()] },
      'sequence:drafter': { turns: [sequenceTurn([app1])] },
      'decisions:drafter': { turns: [decisionsTurn([app2])] },
      'flagged:reviewer:claude': { turns: [reviewTurn()] },
      'flagged:reviewer:codex': { turns: [reviewTurn('# Findings\n\n- The rename in src/util.ts breaks a match.\n')] },
      'flagged:compiler': {
        turns: [
          compileTurn(
            [util],
            [
              { origin: 'claude', agreement: 'concur', title: 'Callers match the old text' },
              { origin: 'codex', agreement: 'diverge', title: 'The rename is not covered by a test' },
              { origin: 'claude', agreement: 'solo', title: 'The log line changes shape' },
            ],
          ),
        ],
      },
      'noise:drafter': { turns: [noiseTurn(1)] },
    },
  };
}

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Patchset } from '../../protocol/patchset';
import { syntheticPatchset } from './boardTools';
import { scriptedAssignment, type HarnessScript, type ScriptCall } from '../../host/harness/scripted';
import { Store } from '../../host/store';
import type { PromptReader } from '../../host/pipeline/ports';
import { newGenerationId, runLensPipeline } from '../../host/pipeline/run';
import type { GenerationOutcome } from '../../host/pipeline/types';

/**
 * The whole lens pipeline over a generated 95-file, 1,252-hunk change with zero-latency scripted
 * seats: five lanes, two reviews and a compile, the Noise complement of ~1,150 members grouped
 * with write_board, every board persisted in a real store. With no model time in it, the wall
 * clock is the host's own cost: board opening, tool calls (over MCP round trips by default),
 * durable writes, the complement, frames. Figures for `npm run bench`; nothing is asserted.
 */

export interface PipelineBenchOptions {
  files?: number;
  hunks?: number;
  /** How the scripted seats call their tools (default mcp: real loopback round trips). */
  transport?: 'mcp' | 'in-process';
  /** Persist into a temp-dir store (default true). */
  store?: boolean;
  /** sql-wasm.wasm location for the store (default: the store's own resolution). */
  wasmPath?: string;
}

export interface PipelineBench {
  files: number;
  hunks: number;
  transport: 'mcp' | 'in-process';
  store: boolean;
  /** Wall clock of runLensPipeline: host time, since the seats take none. Target ≤ 2 s. */
  hostMs: number;
  /** From the pipeline's start to the first element any board published. */
  firstElementMs: number | null;
  firstCoreBoardMs: number | null;
  revealMs: number | null;
  seatTurns: number;
  toolCalls: number;
  lanes: Array<{ lens: string; state: string; elements: number }>;
}

const INTRO = 'The change renames one line in every module. Nothing else moves.';

function cite(patchset: Patchset, hunkIndex: number, as: string): ScriptCall {
  let n = hunkIndex;
  for (const file of patchset.files) {
    if (n < file.hunks.length) {
      const hunk = file.hunks[n]!;
      const region = file.regions.find((r) => r.hunkId === hunk.id && r.side === 'head')!;
      return { tool: 'cite', input: { path: file.path, side: 'head', start_line: region.startLine, end_line: region.endLine }, as };
    }
    n -= file.hunks.length;
  }
  throw new Error(`no hunk ${hunkIndex}`);
}

const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);

/** One settling turn per seat; the core lanes cite disjoint hunks, Noise groups the rest. */
export function benchScript(patchset: Patchset): { script: HarnessScript; noiseMembers: number } {
  const doc = (title: string): ScriptCall => ({ tool: 'set_document', input: { title, intro_markdown: INTRO } });
  const section = (title: string): ScriptCall => ({ tool: 'add_section', input: { title, body_markdown: 'Read these in order.' }, as: 's' });
  let next = 0;
  const take = (count: number) => {
    const out = range(next, count);
    next += count;
    return out;
  };

  const designHunks = take(20);
  const design: ScriptCall[] = [doc('What the change does'), section('Overview'), ...designHunks.map((h, i) => cite(patchset, h, `c${i}`)), { tool: 'finish' }];

  const seqHunks = take(40);
  const sequence: ScriptCall[] = [
    doc('Reading order'),
    section('Walkthrough'),
    ...seqHunks.map((h, i) => cite(patchset, h, `c${i}`)),
    ...seqHunks.map((_, i) => ({ tool: 'add_order_step', input: { title: `Step ${i + 1}`, explanation_markdown: 'The renamed line is what callers read next.', span: `$c${i}`, parent_id: '$s' } })),
    { tool: 'finish' },
  ];

  const decHunks = take(20);
  const decisions: ScriptCall[] = [
    doc('Calls made'),
    section('Naming'),
    ...decHunks.map((h, i) => cite(patchset, h, `c${i}`)),
    ...range(0, 10).map((d) => ({
      tool: 'add_decision',
      input: {
        title: `Call ${d + 1}`,
        statement: 'Lines say they changed.',
        rationale: 'Readers see the edit.',
        alternatives: ['Leave the line alone.'],
        evidence: [`$c${2 * d}`, `$c${2 * d + 1}`],
        parent_id: '$s',
      },
    })),
    { tool: 'finish' },
  ];

  const flagHunks = take(20);
  const compile: ScriptCall[] = [
    doc('What could go wrong'),
    section('Correctness'),
    ...flagHunks.map((h, i) => cite(patchset, h, `c${i}`)),
    ...range(0, 10).map((f) => ({
      tool: 'add_finding',
      input: {
        severity: 'minor',
        category: 'correctness',
        title: `Finding ${f + 1}`,
        body_markdown: 'A caller matching the old text stops matching.',
        remedy_markdown: 'Update the caller.',
        anchor: [`$c${2 * f}`, `$c${2 * f + 1}`],
        parent_id: '$s',
        origin: f % 2 === 0 ? 'claude' : 'codex',
        agreement: f % 3 === 0 ? 'concur' : f % 3 === 1 ? 'diverge' : 'solo',
        score: 60 + f,
      },
    })),
    { tool: 'finish' },
  ];

  const noiseMembers = patchset.totals.hunks - next;
  const groups = 40;
  const entries = [
    { tool: 'set_document', input: { title: 'Safe to skip', intro_markdown: INTRO } },
    ...range(0, groups).map((g) => ({ tool: 'add_noise_group', input: { title: `Group ${g + 1}`, reason: 'The same one-line rename, repeated.' }, local_id: `g${g}` })),
    ...range(1, noiseMembers).map((m) => ({ tool: 'update_noise_member', input: { id: `e${m}`, parent_id: `g${m % groups}` } })),
  ];
  const review: ScriptCall[] = [{ tool: 'submit_findings', input: { findings_markdown: '# Findings\n\n- Renamed lines break callers.\n' } }];
  return {
    noiseMembers,
    script: {
      seats: {
        'design:drafter': { turns: [design] },
        'sequence:drafter': { turns: [sequence] },
        'decisions:drafter': { turns: [decisions] },
        'flagged:reviewer:claude': { turns: [review] },
        'flagged:reviewer:codex': { turns: [review] },
        'flagged:compiler': { turns: [compile] },
        'noise:drafter': { turns: [[{ tool: 'write_board', input: { entries_json: JSON.stringify(entries) } }]] },
      },
    },
  };
}

const benchPrompts: PromptReader = {
  seatPrompt: (seat, context) => `Draft ${seat.seatId}; context in ${context.contextDir}.`,
  followUpPrompt: (_seat, verdict) => verdict ?? 'finish was never called',
};

export async function benchPipeline(options: PipelineBenchOptions = {}): Promise<PipelineBench> {
  const files = options.files ?? 95;
  const hunks = options.hunks ?? 1252;
  const transport = options.transport ?? 'mcp';
  const persist = options.store ?? true;
  const patchset = syntheticPatchset(files, hunks);
  const { script } = benchScript(patchset);
  const root = mkdtempSync(join(tmpdir(), 'rennet-bench-pipeline-'));
  let store: Store | null = null;
  try {
    const workspace = join(root, 'workspace');
    let sessionId = 's-bench';
    if (persist) {
      store = await Store.open(join(root, 'store'), options.wasmPath ? { wasmPath: options.wasmPath } : {});
      const now = new Date().toISOString();
      sessionId = store.createSession({ repoRoot: workspace, target: { kind: 'branch', head: 'feature', base: 'main' }, now }).id;
      store.putPatchset(patchset);
    }
    const assignment = scriptedAssignment(script, { transport });
    const t0 = performance.now();
    const outcome: GenerationOutcome = await runLensPipeline(
      { patchset, sessionId, generationId: newGenerationId(), workspaceDir: workspace, contextDir: `.rennet/context/${sessionId}`, harnesses: assignment },
      { prompts: benchPrompts, clock: { now: () => new Date() }, store, design: null },
    );
    const hostMs = performance.now() - t0;
    const failed = outcome.lanes.filter((l) => l.state !== 'settled');
    if (failed.length > 0) throw new Error(`bench lanes did not settle: ${failed.map((l) => `${l.lens}: ${l.failure?.message ?? l.absence}`).join('; ')}`);
    const timing = (phase: string) => outcome.timings.find((t) => t.phase === phase)?.durationMs ?? null;
    return {
      files,
      hunks,
      transport,
      store: persist,
      hostMs,
      firstElementMs: timing('first-element'),
      firstCoreBoardMs: timing('first-core-board'),
      revealMs: timing('reveal'),
      seatTurns: outcome.spend.length,
      toolCalls: outcome.spend.reduce((n, s) => n + (s.toolCalls ?? 0), 0),
      lanes: outcome.lanes.map((l) => ({ lens: l.lens, state: l.state, elements: l.board.elements.size })),
    };
  } finally {
    store?.close();
    rmSync(root, { recursive: true, force: true });
  }
}

/** Plain-text figures for `npm run bench`. */
export function formatPipelineBench(results: readonly PipelineBench[]): string {
  const first = results[0];
  const lines = [`## Lens pipeline: ${first?.files ?? 0} files, ${first?.hunks.toLocaleString('en-US') ?? 0} hunks, zero-latency scripted seats`];
  for (const r of results) {
    const ms = (x: number | null) => (x === null ? 'n/a' : `${x.toFixed(1)} ms`);
    lines.push(
      `  ${r.transport.padEnd(10)} store ${r.store ? 'on ' : 'off'}  host ${ms(r.hostMs)} (target ≤ 2000 ms)  first element ${ms(r.firstElementMs)}  first core board ${ms(r.firstCoreBoardMs)}  reveal ${ms(r.revealMs)}  ${r.seatTurns} turns, ${r.toolCalls} tool calls`,
    );
  }
  if (first) lines.push(`  boards: ${first.lanes.map((l) => `${l.lens} ${l.elements}`).join(', ')} elements`);
  return lines.join('\n');
}

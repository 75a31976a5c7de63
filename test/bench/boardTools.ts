import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FileChange, Hunk, Patchset } from '../../protocol/patchset';
import { buildCitationIndex } from '../../host/board/citations';
import { startSeatServer } from '../../host/board/mcpServer';
import { BoardSeat, openDraftingBoard } from '../../host/board/seat';
import type { BoardState, WriterContext } from '../../host/board/state';

/**
 * Tool-call cost on a large host-derived board: the Noise complement of a 95-file branch is
 * 1,252 members. Measures host time per call through the in-process BoardSeat path and the
 * round trip through MCP (the SDK's real client over loopback HTTP), plus the bytes of every
 * result. Figures for `npm run bench`; nothing here asserts a timing.
 */

export interface BenchOptions {
  /** Files of the synthetic change (default 95). */
  files?: number;
  /** Host-placed members, i.e. captured hunks (default 1,252). */
  members?: number;
  /** Noise groups the workload creates (default 40). */
  groups?: number;
  /** Calls per probe (valid cite, refused cite, refused remove, finish) (default 100). */
  probes?: number;
  /** Also measure over MCP (default true). */
  mcp?: boolean;
}

export interface CallFigures {
  tool: string;
  calls: number;
  medianMs: number;
  p99Ms: number;
  maxBytes: number;
  medianBytes: number;
}

export interface PathFigures {
  /** Every call of the workload. */
  all: CallFigures;
  byTool: CallFigures[];
  /** The same grouping as one write_board call (in-process only: one call, one timing). */
  writeBoard?: { entries: number; ms: number; bytes: number };
}

export interface ToolCallBench {
  boardElements: number;
  inProcess: PathFigures;
  mcp: PathFigures | null;
  /** Bytes of the Noise tool listing (what a seat's context carries). */
  toolSurfaceBytes: number;
}

/** A captured-looking change: `files` files with `hunks` one-line edits each, 20 lines apart. */
export function syntheticPatchset(files: number, hunks: number): Patchset {
  const out: FileChange[] = [];
  let made = 0;
  for (let f = 0; f < files; f++) {
    const path = `pkg${f % 12}/module${f}.ts`;
    const count = Math.floor(hunks / files) + (f < hunks % files ? 1 : 0);
    const fileHunks: Hunk[] = [];
    for (let h = 0; h < count; h++) {
      const changed = 20 * h + 10;
      const start = changed - 3;
      const lines: Hunk['lines'] = [];
      for (let i = 0; i < 3; i++) lines.push({ kind: 'context', text: `line ${start + i}`, oldLine: start + i, newLine: start + i });
      lines.push({ kind: 'del', text: `line ${changed}`, oldLine: changed, newLine: null });
      lines.push({ kind: 'add', text: `changed ${changed}`, oldLine: null, newLine: changed });
      for (let i = 1; i <= 3; i++) lines.push({ kind: 'context', text: `line ${changed + i}`, oldLine: changed + i, newLine: changed + i });
      const id = `h-${(made++).toString(16).padStart(16, '0')}`;
      fileHunks.push({ id, header: `@@ -${start},7 +${start},7 @@`, oldStart: start, oldLines: 7, newStart: start, newLines: 7, additions: 1, deletions: 1, lines });
    }
    out.push({
      path,
      oldPath: null,
      status: 'modified',
      oldMode: '100644',
      newMode: '100644',
      modeChanged: false,
      oldOid: 'a'.repeat(40),
      newOid: 'b'.repeat(40),
      binary: false,
      submodule: false,
      truncated: false,
      truncation: null,
      similarity: null,
      additions: count,
      deletions: count,
      hunks: fileHunks,
      regions: fileHunks.flatMap((h) => [
        { side: 'base' as const, startLine: h.oldStart, endLine: h.oldStart + h.oldLines - 1, hunkId: h.id },
        { side: 'head' as const, startLine: h.newStart, endLine: h.newStart + h.newLines - 1, hunkId: h.id },
      ]),
    });
  }
  out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return {
    id: `ps-bench${files.toString(16).padStart(4, '0')}${hunks.toString(16).padStart(4, '0')}`,
    base: '1'.repeat(40),
    head: '2'.repeat(40),
    headTree: '3'.repeat(40),
    baseRef: 'main',
    headRef: 'feature',
    baseTip: '1'.repeat(40),
    targetKind: 'branch',
    diffCommand: 'git diff (synthetic)',
    options: { maxFileBytes: 1048576, maxPatchBytesPerFile: 1048576, contextLines: 3 },
    totals: { files, additions: hunks, deletions: hunks, hunks, binary: 0, submodules: 0, truncated: 0, uncounted: 0 },
    files: out,
  };
}

interface Sample {
  tool: string;
  ms: number;
  bytes: number;
}

type Caller = (tool: string, input: Record<string, unknown>) => Promise<string> | string;

/** The workload: document, groups, every member parented, then probes of each result shape. */
async function runWorkload(state: BoardState, call: Caller, options: Required<BenchOptions>, patchset: Patchset): Promise<Sample[]> {
  const samples: Sample[] = [];
  const timed = async (tool: string, input: Record<string, unknown>): Promise<string> => {
    const t0 = performance.now();
    const text = await call(tool, input);
    samples.push({ tool, ms: performance.now() - t0, bytes: Buffer.byteLength(text, 'utf8') });
    return text;
  };
  await timed('set_document', { title: 'Skippable changes', intro_markdown: 'Mechanical edits. They repeat one pattern.' });
  const groups: string[] = [];
  for (let g = 0; g < options.groups; g++) {
    const text = await timed('add_noise_group', { title: `Group ${g}`, reason: 'A one-line rename repeated across modules.' });
    const id = /\be\d+\b/.exec(text)?.[0];
    if (!id) throw new Error(`add_noise_group minted no id: ${text}`);
    groups.push(id);
  }
  const members = [...state.elements.values()].filter((e) => e.kind === 'noise_member').map((e) => e.id);
  for (const [i, id] of members.entries()) await timed('update_noise_member', { id, parent_id: groups[i % groups.length] });
  const files = patchset.files;
  for (let i = 0; i < options.probes; i++) {
    const file = files[i % files.length] as FileChange;
    const region = file.regions.find((r) => r.side === 'head') as FileChange['regions'][number];
    await timed('cite', { path: file.path, side: 'head', start_line: region.startLine, end_line: region.endLine });
    await timed('cite', { path: file.path, side: 'head', start_line: region.endLine + 2, end_line: region.endLine + 3 });
    await timed('remove_element', { id: `e${10_000_000 + i}` });
    await timed('finish', {});
  }
  return samples;
}

function figures(tool: string, samples: readonly Sample[]): CallFigures {
  const ms = samples.map((s) => s.ms).sort((a, b) => a - b);
  const bytes = samples.map((s) => s.bytes).sort((a, b) => a - b);
  const at = (xs: number[], q: number) => xs[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? 0;
  return { tool, calls: samples.length, medianMs: at(ms, 0.5), p99Ms: at(ms, 0.99), maxBytes: bytes.at(-1) ?? 0, medianBytes: at(bytes, 0.5) };
}

function summarise(samples: readonly Sample[]): PathFigures {
  const tools = [...new Set(samples.map((s) => s.tool))];
  return {
    all: figures('(all)', samples),
    byTool: tools.map((tool) =>
      figures(
        tool,
        samples.filter((s) => s.tool === tool),
      ),
    ),
  };
}

export async function benchToolCalls(options: BenchOptions = {}): Promise<ToolCallBench> {
  const opts: Required<BenchOptions> = { files: 95, members: 1252, groups: 40, probes: 100, mcp: true, ...options };
  const patchset = syntheticPatchset(opts.files, opts.members);
  const context: WriterContext = { author: 'bench', citations: buildCitationIndex(patchset) };
  const placed = openDraftingBoard('noise', patchset, context);

  // In-process: the path harnesses with their own tool loop take.
  const local = new BoardSeat({ state: placed, context });
  const inProcess = summarise(await runWorkload(placed, (tool, input) => local.call(tool, input).text, opts, patchset));

  // The same grouping as one write_board call.
  const batchSeat = new BoardSeat({ state: placed, context });
  const memberIds = [...placed.elements.values()].filter((e) => e.kind === 'noise_member').map((e) => e.id);
  const entries: unknown[] = [{ tool: 'set_document', input: { title: 'Skippable changes', intro_markdown: 'Mechanical edits. They repeat one pattern.' } }];
  for (let g = 0; g < opts.groups; g++) entries.push({ tool: 'add_noise_group', input: { title: `Group ${g}`, reason: 'A one-line rename repeated across modules.' }, local_id: `g${g}` });
  memberIds.forEach((id, i) => entries.push({ tool: 'update_noise_member', input: { id, parent_id: `g${i % opts.groups}` } }));
  const t0 = performance.now();
  const batch = batchSeat.call('write_board', { entries_json: JSON.stringify(entries) });
  inProcess.writeBoard = { entries: entries.length, ms: performance.now() - t0, bytes: Buffer.byteLength(batch.text, 'utf8') };

  let mcp: PathFigures | null = null;
  const served = new BoardSeat({ state: placed, context });
  const toolSurfaceBytes = Buffer.byteLength(JSON.stringify(served.tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema }))), 'utf8');
  if (opts.mcp) {
    const server = await startSeatServer({ seat: served });
    const client = new Client({ name: 'rennet-bench', version: '1.0.0' });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: server.headers } }));
      mcp = summarise(
        await runWorkload(
          placed,
          async (tool, input) => {
            const result = await client.callTool({ name: tool, arguments: input });
            return ((result.content as Array<{ text?: string }>)[0]?.text ?? '') as string;
          },
          opts,
          patchset,
        ),
      );
    } finally {
      await client.close().catch(() => undefined);
      await server.close();
    }
  }
  return { boardElements: placed.elements.size, inProcess, mcp, toolSurfaceBytes };
}

/** Plain-text figures for `npm run bench`. */
export function formatToolCallBench(bench: ToolCallBench): string {
  const row = (f: CallFigures) =>
    `  ${f.tool.padEnd(20)} ${String(f.calls).padStart(5)} calls  median ${f.medianMs.toFixed(3)} ms  p99 ${f.p99Ms.toFixed(3)} ms  bytes median ${f.medianBytes} max ${f.maxBytes}`;
  const lines = [`## Board tool calls on a ${bench.boardElements.toLocaleString('en-US')}-element Noise board`, `tool surface (noise listing): ${bench.toolSurfaceBytes} bytes`];
  lines.push('in-process (BoardSeat.call):', row(bench.inProcess.all), ...bench.inProcess.byTool.map(row));
  const wb = bench.inProcess.writeBoard;
  if (wb) lines.push(`  write_board: ${wb.entries} entries in one call, ${wb.ms.toFixed(1)} ms, ${wb.bytes} bytes of result`);
  if (bench.mcp) {
    lines.push('MCP (SDK client, Streamable HTTP, loopback; round trip):', row(bench.mcp.all), ...bench.mcp.byTool.map(row));
    lines.push(`  MCP / in-process median ratio: ${(bench.mcp.all.medianMs / Math.max(bench.inProcess.all.medianMs, 1e-6)).toFixed(1)}×`);
  }
  return lines.join('\n');
}

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCitationIndex } from '../../host/board/citations';
import { startSeatServer, type SeatServerHandle } from '../../host/board/mcpServer';
import { BoardSeat } from '../../host/board/seat';
import { emptyBoard } from '../../host/board/state';
import type { HarnessEvent, SeatSpec, ToolPort, TurnRequest } from '../../host/pipeline/ports';
import type { Patchset } from '../../protocol/patchset';
import type { Step } from '../servers';
import type { TestRepo } from '../fixtures/gitRepo';
import { capturedFixture } from './mcpFixture';

/**
 * Shared by the harness contract tests (harness*.test.ts): the real CLI binaries, a real seat
 * (BoardSeat + its loopback MCP server over a real captured change), isolated vendor homes, and
 * process-tree inspection for the abort tests.
 */

const INSTALL_HINT = 'run `bash test/install-agent-clis.sh` and pass the paths it writes to ~/.cache/rennet-test/agents/paths.json';

/**
 * The real CLI for a suite. Unset: the test is marked pending (plain `npx mocha`; `npm test`
 * always sets it and counts a pending test as a failure). Set to something that is not there:
 * the test fails, saying how to install it.
 */
export function realBin(ctx: Mocha.Context, variable: 'RENNET_CLAUDE_BIN' | 'RENNET_CODEX_BIN'): string {
  const bin = process.env[variable];
  if (!bin) {
    if (!warned.has(variable)) {
      warned.add(variable);
      console.warn(`    (pending: ${variable} is unset — ${INSTALL_HINT}, e.g. ${variable}=… npx mocha …)`);
    }
    ctx.skip();
  }
  assert.ok(existsSync(bin as string), `${variable}=${bin} does not exist: ${INSTALL_HINT}`);
  return bin as string;
}
const warned = new Set<string>();

/** Variables that would send a vendor CLI somewhere other than the scripted server (undefined removes them). */
export const CLAUDE_ISOLATION: NodeJS.ProcessEnv = {
  ANTHROPIC_AUTH_TOKEN: undefined,
  ANTHROPIC_MODEL: undefined,
  ANTHROPIC_SMALL_FAST_MODEL: undefined,
  CLAUDE_CONFIG_DIR: undefined,
  CLAUDE_CODE_USE_BEDROCK: undefined,
  CLAUDE_CODE_USE_VERTEX: undefined,
  CLAUDE_CODE_USE_FOUNDRY: undefined,
  CLAUDECODE: undefined,
  CLAUDE_CODE_ENTRYPOINT: undefined,
  HTTPS_PROXY: undefined,
  HTTP_PROXY: undefined,
  https_proxy: undefined,
  http_proxy: undefined,
};

/** An isolated HOME for Claude Code, pointed at a scripted Anthropic server (tests only: production never isolates). */
export function claudeTestEnv(home: string, origin: string, mark: string): NodeJS.ProcessEnv {
  return {
    ...CLAUDE_ISOLATION,
    HOME: home,
    ANTHROPIC_BASE_URL: origin,
    ANTHROPIC_API_KEY: 'sk-scripted-not-a-key',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    RENNET_TEST_MARK: mark,
  };
}

/**
 * An isolated CODEX_HOME whose config.toml selects the scripted Responses server as its
 * provider — exactly as a user's own configuration would (the harness never replaces it).
 */
export function codexTestHome(home: string, baseUrl: string): void {
  writeFileSync(
    join(home, 'config.toml'),
    [
      'model = "scripted-model"',
      'model_provider = "scripted"',
      '',
      '[model_providers.scripted]',
      'name = "scripted"',
      `base_url = "${baseUrl}"`,
      'env_key = "RENNET_SCRIPTED_KEY"',
      'wire_api = "responses"',
      'request_max_retries = 0',
      'stream_max_retries = 0',
      '',
    ].join('\n'),
  );
}

export function codexTestEnv(home: string, mark: string): NodeJS.ProcessEnv {
  return {
    HOME: home,
    CODEX_HOME: home,
    RENNET_SCRIPTED_KEY: 'scripted-not-a-key',
    OPENAI_API_KEY: undefined,
    OPENAI_BASE_URL: undefined,
    HTTPS_PROXY: undefined,
    HTTP_PROXY: undefined,
    https_proxy: undefined,
    http_proxy: undefined,
    RENNET_TEST_MARK: mark,
  };
}

export function newMark(): string {
  return `mark-${randomBytes(6).toString('hex')}`;
}

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A Sequence seat on a real captured change (src/app.ts changed at lines 5 and 30: head regions 2-8 and 27-33), served over MCP. */
export interface SeatRig {
  repo: TestRepo;
  patchset: Patchset;
  seat: BoardSeat;
  server: SeatServerHandle;
  tools: ToolPort;
  cleanup(): Promise<void>;
}

export async function sequenceSeat(author: string): Promise<SeatRig> {
  const { repo, patchset } = await capturedFixture();
  const seat = new BoardSeat({ state: emptyBoard('sequence', patchset.id), context: { author, citations: buildCitationIndex(patchset) } });
  const server = await startSeatServer({ seat });
  const tools: ToolPort = {
    tools: seat.tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })),
    call: async (name, input) => {
      const outcome = seat.call(name, input);
      return { text: outcome.text, isError: outcome.isError };
    },
  };
  return {
    repo,
    patchset,
    seat,
    server,
    tools,
    cleanup: async () => {
      await server.close();
      repo.cleanup();
    },
  };
}

export const SEQUENCE_SEAT: SeatSpec = { seatId: 'sequence:drafter', lens: 'sequence', role: 'drafter' };

export function turn(rig: SeatRig, prompt: string, options: { followUp?: boolean; signal?: AbortSignal; events?: HarnessEvent[] } = {}): TurnRequest {
  const events = options.events ?? [];
  return {
    seat: SEQUENCE_SEAT,
    prompt,
    followUp: options.followUp ?? false,
    cwd: rig.repo.dir,
    tools: rig.tools,
    mcp: { url: rig.server.url, headers: { ...rig.server.headers } },
    signal: options.signal ?? new AbortController().signal,
    onEvent: (e) => events.push(e),
  };
}

const call = (name: string, input: Record<string, unknown> = {}, as?: string): Step => ({ toolCalls: [{ name, input, ...(as ? { as } : {}) }] });

/** A refused citation (outside the changed regions), then a board that finishes. */
export const SETTLING_STEPS: Step[] = [
  call('cite', { path: 'src/app.ts', side: 'head', start_line: 12, end_line: 14 }),
  call('cite', { path: 'src/app.ts', side: 'head', start_line: 4, end_line: 6 }, 'c'),
  call('add_section', { title: 'Reading order', body_markdown: 'Two lines of the module change.' }, 's'),
  call('add_order_step', { title: 'Line five changes', explanation_markdown: 'The fifth line now says it changed.', span: '$c', parent_id: '$s' }),
  call('set_document', { title: 'Two lines change', intro_markdown: 'Two lines now say they changed. Nothing else moves.' }),
  call('finish'),
  { text: 'The board is finished.' },
];

/** First turn: one citation, then the model stops without finishing. */
export const FIRST_TURN_STEPS: Step[] = [call('cite', { path: 'src/app.ts', side: 'head', start_line: 4, end_line: 6 }, 'c'), { text: 'I stop here for now.' }];
/** Follow-up turn: uses the first turn's citation (`$c`, from the resumed conversation) and finishes. */
export const FOLLOW_UP_STEPS: Step[] = [
  call('add_section', { title: 'Reading order', body_markdown: 'Two lines of the module change.' }, 's'),
  call('add_order_step', { title: 'Line five changes', explanation_markdown: 'The fifth line now says it changed.', span: '$c', parent_id: '$s' }),
  call('set_document', { title: 'Two lines change', intro_markdown: 'Two lines now say they changed. Nothing else moves.' }),
  call('finish'),
  { text: 'Finished now.' },
];

export function boardToolCalls(events: readonly HarnessEvent[]): Array<{ name: string; isError: boolean }> {
  return events.filter((e): e is Extract<HarnessEvent, { type: 'tool-result' }> => e.type === 'tool-result').map((e) => ({ name: e.name, isError: e.isError }));
}

// ─── Processes ───────────────────────────────────────────────────────────────────────────────

export interface Proc {
  pid: number;
  pgid: number;
  cmdline: string[];
}

/** Every live process whose environment carries RENNET_TEST_MARK=<mark> (all of a CLI's tree inherits it). */
export function processesMarked(mark: string): Proc[] {
  const out: Proc[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const environ = readFileSync(`/proc/${entry}/environ`, 'utf8');
      if (!environ.split('\0').includes(`RENNET_TEST_MARK=${mark}`)) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid pgrp …: comm may hold spaces, so read after the last ')'.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const state = fields[0];
      if (state === 'Z') continue; // a zombie is already dead (waiting for its parent to reap it)
      out.push({
        pid: Number(entry),
        pgid: Number(fields[2]),
        cmdline: readFileSync(`/proc/${entry}/cmdline`, 'utf8')
          .split('\0')
          .filter((s) => s.length > 0),
      });
    } catch {
      // Gone, or not ours to read.
    }
  }
  return out;
}

/** This process's own process group id. */
export function ownPgid(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}

/** `ps` rows of a process group (empty when the group has no live member). */
export function psGroup(pgid: number): string[] {
  const rows = execFileSync('ps', ['-eo', 'pid=,pgid=,stat=,args='], { encoding: 'utf8' }).split('\n');
  return rows.filter((row) => {
    const [pid, group, stat] = row.trim().split(/\s+/);
    return pid !== undefined && Number(group) === pgid && !(stat ?? '').startsWith('Z');
  });
}

export async function until<T>(probe: () => T | null | undefined | false, what: string, timeoutMs = 60_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export function removeDir(dir: string | undefined | null): void {
  if (dir) rmSync(dir, { recursive: true, force: true });
}

/** The text of an Anthropic message's content (string or blocks), system reminders left out. */
export function anthropicUserText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return (content as Array<Record<string, unknown>>)
    .filter((b) => b.type === 'text' && typeof b.text === 'string' && !(b.text as string).trimStart().startsWith('<system-reminder>'))
    .map((b) => b.text as string)
    .join('');
}

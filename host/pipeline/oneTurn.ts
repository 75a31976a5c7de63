import { READ_RESULT_MAX_BYTES } from '../../protocol/read';
import type { SeatSpend } from '../../protocol/review';
import type { Harness, SeatSpec, TurnResult } from './ports';
import { startSeatServer, type ServedToolSurface } from '../board/mcpServer';

/**
 * One turn of a one-shot seat (an explainer, the pull-request opener, the round report): its tools
 * served in-process and over a loopback MCP server for the CLI harnesses, the server closed
 * whatever happens, a harness that throws answered as a failed turn. What the seat handed in is
 * read from the caller's own surface afterwards.
 */
export async function runOneTurn(harness: Harness, input: { seat: SeatSpec; prompt: string; cwd: string; surface: ServedToolSurface; signal: AbortSignal }): Promise<TurnResult> {
  const { surface } = input;
  const port = {
    tools: surface.tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })),
    call: async (name: string, args: Record<string, unknown>) => surface.call(name, args),
  };
  let server: Awaited<ReturnType<typeof startSeatServer>> | null = null;
  try {
    server = await startSeatServer({ seat: surface });
    return await harness.runTurn({
      seat: input.seat,
      prompt: input.prompt,
      followUp: false,
      cwd: input.cwd,
      tools: port,
      mcp: { url: server.url, headers: { ...server.headers } },
      signal: input.signal,
      onEvent: () => undefined,
    });
  } catch (error) {
    return { outcome: 'failed', message: `the harness broke: ${(error as Error).message}`, usage: null };
  } finally {
    await server?.close();
  }
}

/**
 * A one-shot seat's spend, recorded as a pipeline seat's turn is (host/pipeline/run.ts): time,
 * tokens and price as the harness reported them (null when it did not), tool calls and refusals,
 * and the read tools' share — calls, the bytes they sent and the milliseconds they took.
 */
export function oneTurnSpend(
  seat: SeatSpec,
  harness: Pick<Harness, 'kind' | 'model'>,
  result: TurnResult,
  durationMs: number,
  totals: { calls: number; refusals: number; readCalls: number; readBytes: number; readMs: number },
): SeatSpend {
  const tokens = (n: number | null | undefined) => (typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : null);
  const price = result.usage?.priceUsd;
  return {
    seat: seat.seatId,
    lens: seat.lens,
    role: seat.role,
    harness: harness.kind,
    model: harness.model,
    durationMs: Math.max(0, Math.round(durationMs)),
    inputTokens: tokens(result.usage?.inputTokens),
    outputTokens: tokens(result.usage?.outputTokens),
    toolCalls: totals.calls,
    refusals: totals.refusals,
    readCalls: totals.readCalls,
    readBytes: totals.readBytes,
    readMs: Math.round(totals.readMs),
    priceUsd: typeof price === 'number' && Number.isFinite(price) && price >= 0 ? price : null,
  };
}

/** `7 reads, 12 KiB, 340 ms`: a one-shot seat's reads of the change, for a log line or a message. */
export function readsText(spend: Pick<SeatSpend, 'readCalls' | 'readBytes' | 'readMs'>): string {
  const calls = spend.readCalls ?? 0;
  return `${calls} read${calls === 1 ? '' : 's'}, ${Math.ceil((spend.readBytes ?? 0) / 1024)} KiB, ${Math.round(spend.readMs ?? 0)} ms`;
}

/**
 * The first checks of a one-shot seat's tool call: a tool of that name, and input its schema
 * takes. The refusal's words name the tool and the first problem (never the input's values).
 */
export function checkToolCall<
  T extends { name: string; zod: { safeParse(input: unknown): { success: true; data: unknown } | { success: false; error: { issues: ReadonlyArray<{ path: PropertyKey[]; message: string }> } } } },
>(tools: readonly T[], name: string, input: unknown, nothing: string): { ok: true; tool: T; value: Record<string, unknown> } | { ok: false; text: string } {
  const tool = tools.find((t) => t.name === name);
  if (!tool) return { ok: false, text: `There is no tool named "${String(name).slice(0, 60)}"; nothing was called. The tools are: ${tools.map((t) => t.name).join(', ')}.` };
  const parsed = tool.zod.safeParse(input ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? `${issue.path.map(String).join('.')}: ` : '';
    return { ok: false, text: `The input of ${name} is not valid (${where}${issue?.message ?? 'unknown'}); ${nothing}.` };
  }
  return { ok: true, tool, value: parsed.data as Record<string, unknown> };
}

/**
 * Whole JSON lines as pages a one-shot seat reads one call at a time (its read_evidence,
 * read_prior_items): each page within the read tools' result limit, each ending with where it
 * stands and the call that reads the next.
 */
export function jsonLinePages(lines: readonly string[], tool: string): string[] {
  const budget = READ_RESULT_MAX_BYTES - 200;
  const pages: string[][] = [[]];
  let size = 0;
  for (const line of lines) {
    const bytes = Buffer.byteLength(line, 'utf8') + 1;
    const current = pages[pages.length - 1] as string[];
    if (current.length > 0 && size + bytes > budget) {
      pages.push([line]);
      size = bytes;
    } else {
      current.push(line);
      size += bytes;
    }
  }
  return pages.map((p, i) => `${p.join('\n')}\n[page ${i + 1} of ${pages.length}${i + 1 < pages.length ? `; continue with ${tool} {"page": ${i + 2}}` : ': the last'}]`);
}

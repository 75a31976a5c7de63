import type { Harness, SeatSpec, TurnResult } from '../pipeline/ports';
import { startSeatServer, type ServedToolSurface } from './mcpServer';

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
 * The first checks of a one-shot seat's tool call: a tool of that name, and input its schema
 * takes. The refusal's words name the tool and the first problem (never the input's values).
 */
export function checkToolCall<T extends { name: string; zod: { safeParse(input: unknown): { success: true; data: unknown } | { success: false; error: { issues: ReadonlyArray<{ path: PropertyKey[]; message: string }> } } } }>(
  tools: readonly T[],
  name: string,
  input: unknown,
  nothing: string,
): { ok: true; tool: T; value: Record<string, unknown> } | { ok: false; text: string } {
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

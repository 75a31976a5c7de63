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

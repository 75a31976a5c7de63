import type { ReadSurface } from './tools';

/**
 * One seat's whole tool surface: its own tools (a board's, a Flagged review's submit_findings, an
 * explainer's) and the read tools every seat gets, listed read tools first. Served the same way
 * in-process (ToolPort) and over the seat's MCP server. A name both define is a programming error.
 */

export interface SeatToolSurface<T extends { name: string }> {
  readonly tools: readonly T[];
  call(name: string, input: unknown): { text: string; isError: boolean } | Promise<{ text: string; isError: boolean }>;
}

/** A seat's tool counters: all calls and refusals, and the read tools' share. */
export interface ReadTotals {
  calls: number;
  refusals: number;
  readCalls: number;
  readBytes: number;
  readMs: number;
}

export interface ComposedSurface<T extends { name: string; description: string; inputSchema: Record<string, unknown> }> {
  readonly tools: readonly T[];
  call(name: string, input: unknown): Promise<{ text: string; isError: boolean }>;
  /** Calls and refusals of both parts; `readBytes` is what the read tools sent. */
  stats(): ReadTotals;
  /** The surface as a harness takes it in-process (a pipeline ToolPort): each tool's name, description and schema, and the call. */
  port(): { tools: Array<{ name: string; description: string; inputSchema: T['inputSchema'] }>; call(name: string, input: Record<string, unknown>): Promise<{ text: string; isError: boolean }> };
}

export function withReadTools<T extends { name: string; description: string; inputSchema: Record<string, unknown> }>(
  own: SeatToolSurface<T> & { stats?(): { calls: number; refusals: number } },
  read: ReadSurface,
): ComposedSurface<T> {
  const readNames = new Set(read.tools.map((t) => t.name));
  const clash = own.tools.find((t) => readNames.has(t.name));
  if (clash) throw new Error(`the seat's own tool ${clash.name} has a read tool's name`);
  const tools = [...(read.tools as unknown as readonly T[]), ...own.tools];
  const call = async (name: string, input: unknown) => (readNames.has(name) ? read.call(name, input) : own.call(name, input));
  return {
    tools,
    call,
    port: () => ({ tools: tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })), call }),
    stats() {
      const r = read.stats();
      const o = own.stats?.() ?? { calls: 0, refusals: 0 };
      return { calls: o.calls + r.calls, refusals: o.refusals + r.refusals, readCalls: r.calls, readBytes: r.bytes, readMs: r.ms };
    },
  };
}

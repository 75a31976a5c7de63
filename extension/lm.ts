import * as vscode from 'vscode';
import type { CancellationToken as RpcCancellationToken } from 'vscode-languageclient/node';
import { LmChat, LmModels, type LmChatParams, type LmChatResult, type LmModelInfo, type LmModelsParams, type LmToolCall } from '../protocol/rpc';
import type { RpcEdge } from '../protocol/rpcEdge';
import { failureOf, planMessages, type PlannedMessage } from './lmMessages';

/**
 * The extension side of the `vscode-lm` harness: answers the host's `rennet/lm/models` and
 * `rennet/lm/chat` with `vscode.lm`. One chat request is one model response (the host runs the
 * tool loop): select the model, rebuild the transcript as LanguageModelChatMessages (text, tool
 * calls, tool results), `model.sendRequest(messages, {tools, justification}, token)`, and collect
 * the text and tool-call parts of `response.stream`. Failures come back typed, never thrown.
 *
 * The tool-calling parts (LanguageModelToolCallPart, …ToolResultPart; VS Code 1.95+) are newer
 * than the `@types/vscode` this extension compiles against (engine ^1.91), so they are read
 * through the small typed view below and checked at run time: an older VS Code answers
 * `no-model` with a sentence saying why.
 */

/** What this file uses of vscode.lm beyond @types/vscode 1.91 (present at run time on 1.95+). */
interface LmRuntime {
  lm?: {
    selectChatModels(selector?: vscode.LanguageModelChatSelector): Thenable<vscode.LanguageModelChat[]>;
  };
  LanguageModelChatMessage: {
    User(content: unknown[]): vscode.LanguageModelChatMessage;
    Assistant(content: unknown[]): vscode.LanguageModelChatMessage;
  };
  LanguageModelTextPart?: new (value: string) => { value: string };
  LanguageModelToolCallPart?: new (callId: string, name: string, input: object) => { callId: string; name: string; input: object };
  LanguageModelToolResultPart?: new (callId: string, content: unknown[]) => object;
}

interface ToolCallingRuntime extends LmRuntime {
  lm: NonNullable<LmRuntime['lm']>;
  LanguageModelTextPart: NonNullable<LmRuntime['LanguageModelTextPart']>;
  LanguageModelToolCallPart: NonNullable<LmRuntime['LanguageModelToolCallPart']>;
  LanguageModelToolResultPart: NonNullable<LmRuntime['LanguageModelToolResultPart']>;
}

function runtime(): ToolCallingRuntime | string {
  const api = vscode as unknown as LmRuntime;
  if (!api.lm || typeof api.lm.selectChatModels !== 'function') return `VS Code ${vscode.version} has no language model API (vscode.lm)`;
  if (!api.LanguageModelTextPart || !api.LanguageModelToolCallPart || !api.LanguageModelToolResultPart) {
    return `VS Code ${vscode.version} has no tool calling for language models (it needs VS Code 1.95 or newer)`;
  }
  return api as ToolCallingRuntime;
}

/** Installs the host → extension handlers on the edge of every LanguageClient HostClient creates. */
export function registerLmHandlers(edge: RpcEdge, log: vscode.LogOutputChannel): void {
  edge.request(LmModels, (params) => listChatModels(params));
  edge.request(LmChat, (params, token) => chat(params, token, log));
}

/** The chat models VS Code has for a selector; empty when none (or no vscode.lm). */
export async function listChatModels(params: LmModelsParams = {}): Promise<LmModelInfo[]> {
  const api = runtime();
  if (typeof api === 'string') return [];
  const selector: vscode.LanguageModelChatSelector = {};
  if (params.vendor) selector.vendor = params.vendor;
  if (params.family) selector.family = params.family;
  const models = await api.lm.selectChatModels(selector);
  return models.map(modelInfo);
}

export function modelInfo(model: vscode.LanguageModelChat): LmModelInfo {
  return {
    vendor: model.vendor,
    family: model.family,
    id: model.id,
    name: model.name,
    version: model.version,
    maxInputTokens: model.maxInputTokens,
    toolCalling: toolCallingOf(model),
  };
}

/** The stable consumer API does not expose capabilities; a proposed one may. null: not said. */
function toolCallingOf(model: vscode.LanguageModelChat): boolean | null {
  try {
    const capabilities = (model as unknown as { capabilities?: { supportsToolCalling?: unknown; toolCalling?: unknown } }).capabilities;
    const value = capabilities?.supportsToolCalling ?? capabilities?.toolCalling;
    if (typeof value === 'boolean') return value;
    if (typeof value === 'number') return value > 0;
  } catch {
    // A proposed property this extension may not read.
  }
  return null;
}

/** One model response for the host's tool loop. Never throws: every failure is typed. */
export async function chat(params: LmChatParams, rpcToken: RpcCancellationToken, log: vscode.LogOutputChannel): Promise<LmChatResult> {
  const api = runtime();
  if (typeof api === 'string') return { ok: false, reason: 'no-model', message: api };
  const cts = new vscode.CancellationTokenSource();
  const link = rpcToken.onCancellationRequested(() => cts.cancel());
  if (rpcToken.isCancellationRequested) cts.cancel();
  const started = Date.now();
  try {
    const selector: vscode.LanguageModelChatSelector = {};
    if (params.vendor) selector.vendor = params.vendor;
    if (params.family) selector.family = params.family;
    if (params.model) selector.id = params.model;
    const models = await api.lm.selectChatModels(selector);
    const model = models[0];
    if (!model) return { ok: false, reason: 'no-model', message: await noModelSentence(api, selector) };
    if (cts.token.isCancellationRequested) return { ok: false, reason: 'cancelled', message: 'the request was cancelled before it was sent' };

    const messages = planMessages(params.messages).map((m) => toChatMessage(api, m));
    const options = {
      justification: params.justification,
      ...(params.tools.length > 0 ? { tools: params.tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })) } : {}),
    } as vscode.LanguageModelChatRequestOptions;
    const response = await model.sendRequest(messages, options, cts.token);
    const stream = (response as unknown as { stream?: AsyncIterable<unknown> }).stream;
    if (!stream) return { ok: false, reason: 'error', message: `VS Code ${vscode.version} answered without a response stream (tool calling needs VS Code 1.95 or newer)` };
    let text = '';
    const toolCalls: LmToolCall[] = [];
    for await (const part of stream) {
      if (part instanceof api.LanguageModelTextPart) text += part.value;
      else if (part instanceof api.LanguageModelToolCallPart) toolCalls.push({ callId: part.callId, name: part.name, input: part.input as Record<string, unknown> });
      if (cts.token.isCancellationRequested) break;
    }
    if (cts.token.isCancellationRequested) return { ok: false, reason: 'cancelled', message: 'the request was cancelled while the model answered' };
    const name = `${model.vendor}/${model.id}`;
    // Counts only, never content: prompts and answers carry the reviewed code.
    log.debug(`[lm] ${params.seatId}: ${name} answered ${toolCalls.length} tool call(s) and ${text.length} characters in ${Date.now() - started} ms`);
    // vscode.lm reports no usage: say so (null), never a zero.
    return { ok: true, text, toolCalls, model: name, usage: null };
  } catch (error) {
    const failure = failureOf(error, cts.token.isCancellationRequested);
    log.warn(`[lm] ${params.seatId}: ${failure.reason}: ${failure.message}`);
    return { ok: false, ...failure };
  } finally {
    link.dispose();
    cts.dispose();
  }
}

function toChatMessage(api: ToolCallingRuntime, message: PlannedMessage): vscode.LanguageModelChatMessage {
  const parts = message.parts.map((p) => {
    switch (p.kind) {
      case 'text':
        return new api.LanguageModelTextPart(p.text);
      case 'call':
        return new api.LanguageModelToolCallPart(p.callId, p.name, p.input);
      case 'result':
        return new api.LanguageModelToolResultPart(p.callId, [new api.LanguageModelTextPart(p.text)]);
    }
  });
  return message.role === 'user' ? api.LanguageModelChatMessage.User(parts) : api.LanguageModelChatMessage.Assistant(parts);
}

async function noModelSentence(api: ToolCallingRuntime, selector: vscode.LanguageModelChatSelector): Promise<string> {
  const wanted = Object.entries(selector)
    .map(([k, v]) => `${k} "${String(v)}"`)
    .join(', ');
  let all: vscode.LanguageModelChat[] = [];
  try {
    all = await api.lm.selectChatModels();
  } catch {
    // Listing is only for the sentence.
  }
  const listed =
    all.length === 0
      ? 'VS Code lists no chat models (install and sign in to a model provider such as GitHub Copilot)'
      : `VS Code lists ${all.length}: ${all
          .slice(0, 8)
          .map((m) => `${m.vendor}/${m.id}`)
          .join(', ')}${all.length > 8 ? ', …' : ''}`;
  return `no chat model matches ${wanted || 'any selector'}; ${listed}`;
}

// A scripted language model for the vscode.lm suites: registered through the real
// `vscode.lm.registerLanguageModelChatProvider` (vendor "rennet-scripted", declared under
// contributes.languageModelChatProviders), so Rennet reaches it exactly as it would reach Copilot:
// lm.selectChatModels → model.sendRequest → this provider. It is stateless per request, like a
// model: round n is the number of Assistant messages in the transcript it is sent, and `$name` in
// a scripted input is resolved from the tool results in that transcript (the first `e<n>` id of
// the result of the call scripted `as: name`). Every request is recorded for the suites.
import * as vscode from 'vscode';

export const SCRIPTED_VENDOR = 'rennet-scripted';

export interface ScriptedCall {
  name: string;
  input: Record<string, unknown>;
  as?: string;
}
export interface ScriptedRound {
  text?: string;
  calls?: ScriptedCall[];
}

/** What one request carried, as the provider saw it. */
export interface ObservedRequest {
  modelId: string;
  round: number;
  roles: string[];
  tools: string[];
  /** Tool results in the transcript, by call id: their text (an error result starts with "Error: "). */
  results: Record<string, string>;
  firstUserText: string;
}

/** What this file reads of the provider API (VS Code 1.104+; newer than the @types/vscode the repo compiles against). */
interface ProviderRuntime {
  lm: { registerLanguageModelChatProvider(vendor: string, provider: unknown): vscode.Disposable };
  LanguageModelTextPart: new (value: string) => unknown;
  LanguageModelToolCallPart: new (callId: string, name: string, input: object) => unknown;
  LanguageModelError: { NoPermissions(message?: string): Error; Blocked(message?: string): Error };
}

interface RequestMessage {
  role: number;
  content: ReadonlyArray<unknown>;
}

/** Model ids the provider serves and what each does. */
export const MODELS = {
  /** Plays `script` (set by the suite). */
  drafter: { id: 'sequence-drafter', family: 'rennet-scripted' },
  /** Always refuses as a user who denied consent would (LanguageModelError.NoPermissions). */
  refuser: { id: 'consent-refuser', family: 'rennet-refuser' },
} as const;

let script: ScriptedRound[] = [];
export const observed: ObservedRequest[] = [];

export function setScript(rounds: ScriptedRound[]): void {
  script = rounds;
  observed.length = 0;
}

const ASSISTANT = 2; // vscode.LanguageModelChatMessageRole.Assistant

function textOf(part: unknown): string | null {
  return part && typeof part === 'object' && typeof (part as { value?: unknown }).value === 'string' ? (part as { value: string }).value : null;
}

function resultOf(part: unknown): { callId: string; text: string } | null {
  if (!part || typeof part !== 'object') return null;
  const p = part as { callId?: unknown; content?: unknown; name?: unknown };
  if (typeof p.callId !== 'string' || !Array.isArray(p.content) || 'name' in p) return null;
  return { callId: p.callId, text: p.content.map((c) => textOf(c) ?? '').join('') };
}

function substitute(value: unknown, ids: ReadonlyMap<string, string>): unknown {
  if (typeof value === 'string') return value.replace(/\$([A-Za-z_]\w*)/g, (m, name: string) => ids.get(name) ?? m);
  if (Array.isArray(value)) return value.map((v) => substitute(v, ids));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, ids)]));
  return value;
}

/** The call id of call `index` in round `round`; the `as` name rides along so a later round finds it. */
const callIdOf = (round: number, index: number, as?: string) => `r${round}-${index}${as ? `-${as}` : ''}`;

export function registerScriptedProvider(): vscode.Disposable {
  const api = vscode as unknown as ProviderRuntime;
  const info = (m: (typeof MODELS)[keyof typeof MODELS], name: string) => ({
    id: m.id,
    name,
    family: m.family,
    version: '1.0.0',
    maxInputTokens: 200_000,
    maxOutputTokens: 8_192,
    capabilities: { toolCalling: true },
  });
  return api.lm.registerLanguageModelChatProvider(SCRIPTED_VENDOR, {
    provideLanguageModelChatInformation: () => [info(MODELS.drafter, 'Rennet scripted drafter'), info(MODELS.refuser, 'Rennet scripted refuser')],
    provideTokenCount: async (_model: unknown, text: unknown) => Math.ceil((typeof text === 'string' ? text.length : JSON.stringify(text).length) / 4),
    async provideLanguageModelChatResponse(
      model: { id: string },
      messages: readonly RequestMessage[],
      options: { tools?: ReadonlyArray<{ name: string }> },
      progress: vscode.Progress<unknown>,
    ): Promise<void> {
      const round = messages.filter((m) => m.role === ASSISTANT).length;
      const results: Record<string, string> = {};
      const ids = new Map<string, string>();
      for (const m of messages) {
        for (const part of m.content) {
          const r = resultOf(part);
          if (!r) continue;
          results[r.callId] = r.text;
          const as = /^r\d+-\d+-(.+)$/.exec(r.callId)?.[1];
          const id = /\be\d+\b/.exec(r.text)?.[0];
          if (as && id && !r.text.startsWith('Error: ')) ids.set(as, id);
        }
      }
      const firstUser = messages[0]?.content.map((p) => textOf(p) ?? '').join('') ?? '';
      observed.push({
        modelId: model.id,
        round,
        roles: messages.map((m) => (m.role === ASSISTANT ? 'assistant' : 'user')),
        tools: (options.tools ?? []).map((t) => t.name),
        results,
        firstUserText: firstUser,
      });

      if (model.id === MODELS.refuser.id) throw api.LanguageModelError.NoPermissions('the scripted user denied Rennet access to this model');
      const step = script[round];
      if (!step) {
        progress.report(new api.LanguageModelTextPart(`(the script has no round ${round + 1}; stopping)`));
        return;
      }
      if (step.text) progress.report(new api.LanguageModelTextPart(step.text));
      (step.calls ?? []).forEach((call, index) => {
        progress.report(new api.LanguageModelToolCallPart(callIdOf(round, index, call.as), call.name, substitute(call.input, ids) as object));
      });
    },
  });
}

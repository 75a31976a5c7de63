import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { NotificationType, RequestType } from 'vscode-jsonrpc';
import { z } from 'zod';
import * as gatesRpc from '../../../protocol/gatesRpc';
import { RPC_PARAMS_MAX_CHARS, RPC_PARAMS_MAX_DEPTH } from '../../../protocol/limits';
import * as rpc from '../../../protocol/rpc';
import { checkParams, jsonShapeProblem, RennetNotification, RennetRequest } from '../../../protocol/rpcSchema';

/**
 * Every JSON-RPC message of protocol/ carries the zod schema of its params, and the pure check the
 * receiving edges run (checkParams) refuses anything else with a sentence — it never throws.
 */

const ROOT = join(__dirname, '..', '..', '..');
const MODULES: Record<string, Record<string, unknown>> = { 'protocol/rpc.ts': rpc, 'protocol/gatesRpc.ts': gatesRpc };

type AnyMessage = RennetRequest<z.ZodType, unknown> | RennetNotification<z.ZodType>;

/** Every RequestType / NotificationType a module exports, by its exported name. */
function exportedMessages(): Array<{ name: string; file: string; value: unknown }> {
  const found: Array<{ name: string; file: string; value: unknown }> = [];
  for (const [file, module] of Object.entries(MODULES)) {
    for (const [name, value] of Object.entries(module)) {
      if (value instanceof RequestType || value instanceof NotificationType) found.push({ name, file, value });
    }
  }
  return found;
}

function messages(): Array<{ name: string; message: AnyMessage }> {
  return exportedMessages().map(({ name, value }) => ({ name, message: value as AnyMessage }));
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(ROOT, dir))) {
    const path = join(dir, entry);
    if (statSync(join(ROOT, path)).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.tsx?$/.test(entry)) out.push(path);
  }
  return out;
}

describe('protocol/rpcSchema: every message pairs its type with a schema', () => {
  it('every RequestType and NotificationType exported by rpc.ts and gatesRpc.ts is declared with its params schema', () => {
    const found = exportedMessages();
    assert.ok(found.length > 0, 'no messages were found: the test reads nothing');
    const missing = found.filter(({ value }) => !(value instanceof RennetRequest || value instanceof RennetNotification)).map(({ name, file }) => `${file}: ${name}`);
    assert.deepEqual(missing, [], 'declare these with rpcRequest / rpcNotification (protocol/rpcSchema.ts) and a zod schema of their params');
    for (const { name, message } of messages()) {
      assert.ok(message.paramsSchema instanceof z.ZodType, `${name} has no zod params schema`);
      assert.ok(message.maxParamsChars > 0, `${name} has no params ceiling`);
      assert.match(message.method, /^rennet\/[a-z]+\/[a-zA-Z]+$/, `${name}'s method is not rennet/<domain>/<verb>`);
    }
    const methods = messages().map(({ message }) => message.method);
    assert.equal(new Set(methods).size, methods.length, 'two messages share a method');
  });

  it('no module of protocol/ declares a message without a schema', () => {
    const bare = sourceFiles('protocol')
      .filter((file) => file !== join('protocol', 'rpcSchema.ts'))
      .filter((file) => /new (Request|Notification)Type\d?\s*</.test(readFileSync(join(ROOT, file), 'utf8')));
    assert.deepEqual(bare, [], 'declare messages with rpcRequest / rpcNotification');
  });

  it('every message has exactly one receiver, registered through the edge (host/main.ts or extension/)', () => {
    const registered = (dir: string) => {
      const names = new Set<string>();
      for (const file of sourceFiles(dir)) {
        for (const match of readFileSync(join(ROOT, file), 'utf8').matchAll(/\bedge\.(?:request|notification)\(\s*([A-Z]\w*)/g)) names.add(match[1]!);
      }
      return names;
    };
    const host = registered('host');
    const extension = registered('extension');
    const problems = messages()
      .map(({ name }) => ({ name, receivers: [host.has(name) && 'host', extension.has(name) && 'extension'].filter(Boolean) }))
      .filter(({ receivers }) => receivers.length !== 1)
      .map(({ name, receivers }) => `${name}: ${receivers.length === 0 ? 'no receiver' : `received by ${receivers.join(' and ')}`}`);
    assert.deepEqual(problems, []);
  });

  it('nothing in host/ or extension/ registers a message handler around the edge', () => {
    const direct: string[] = [];
    for (const file of [...sourceFiles('host'), ...sourceFiles('extension')]) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const match of text.matchAll(/\.on(Request|Notification)\(\s*([A-Z]\w*)/g)) direct.push(`${file}: .on${match[1]}(${match[2]}`);
    }
    assert.deepEqual(direct, [], 'register through rpcEdge (protocol/rpcEdge.ts): edge.request / edge.notification');
  });
});

describe('protocol/rpcSchema: checkParams', () => {
  /** The keys of an object schema (to generate near-miss params), or none. */
  function keysOf(schema: z.ZodType): string[] {
    return schema instanceof z.ZodObject ? Object.keys(schema.shape) : [];
  }

  it("any JSON value as any message's params either validates or is refused with a sentence naming the method — never a throw", () => {
    for (const { name, message } of messages()) {
      const keys = keysOf(message.paramsSchema);
      const nearMiss = keys.length > 0 ? fc.record(Object.fromEntries(keys.map((k) => [k, fc.jsonValue()])), { requiredKeys: [] }) : fc.jsonValue();
      fc.assert(
        fc.property(fc.oneof(fc.jsonValue(), nearMiss, fc.constant(undefined)), (params) => {
          const checked = checkParams(message, params);
          if (checked.ok) return;
          assert.ok(checked.message.startsWith(`${message.method}: `), `${name}: ${checked.message}`);
          assert.ok(checked.message.length > message.method.length + 2, `${name}: an empty refusal`);
          assert.ok(checked.field.length > 0);
        }),
        { numRuns: 60 },
      );
    }
  });

  it('names the field and why, and never quotes the values (a key rides in the harness config)', () => {
    const secret = 'sk-never-in-a-refusal-0123456789';
    const checked = checkParams(rpc.ReviewRunLenses, { sessionId: 's-1', harness: { default: 'gpt-7', lenses: {}, vscodeLm: {}, openai: { apiKey: secret }, anthropic: {} } });
    assert.equal(checked.ok, false);
    if (checked.ok) return;
    assert.equal(checked.field, 'harness.default');
    assert.match(checked.message, /^rennet\/review\/runLenses: harness\.default: Invalid option/);
    assert.ok(!checked.message.includes(secret));
    const deep = checkParams(rpc.AsksCommand, {
      sessionId: 's-1',
      command: { type: 'stage', anchor: { kind: 'line', patchsetId: 'ps-1', path: 'a.ts', side: 'head', startLine: 'five', endLine: 5 }, text: 'x', intent: 'comment', lane: 'changes' },
    });
    assert.ok(!deep.ok && deep.field === 'command.anchor.startLine', deep.ok ? '' : deep.message);
    const missing = checkParams(rpc.SessionGet, undefined);
    assert.ok(!missing.ok && missing.field === '(params)' && /expected object/.test(missing.message));
  });

  it('accepts the params a caller sends, with keys it does not know dropped', () => {
    const checked = checkParams(rpc.SessionGet, { sessionId: 's-1', extra: 1 });
    assert.deepEqual(checked, { ok: true, params: { sessionId: 's-1' } });
    assert.deepEqual(checkParams(rpc.HostHello, {}), { ok: true, params: {} });
  });

  it('refuses params over the ceiling and nesting past the depth before the schema runs', () => {
    const huge = checkParams(rpc.RepoListBranches, { repo: 'x'.repeat(RPC_PARAMS_MAX_CHARS + 1) });
    assert.ok(
      !huge.ok && huge.message === `rennet/repo/listBranches: the params are over ${RPC_PARAMS_MAX_CHARS} characters (the limit for this message); nothing was done`,
      huge.ok ? '' : huge.message,
    );
    let nested: unknown = 'leaf';
    for (let i = 0; i < 100_000; i++) nested = [nested];
    const deep = checkParams(rpc.ForgesConfigure, { entries: nested });
    assert.ok(!deep.ok && deep.message.includes(`deeper than ${RPC_PARAMS_MAX_DEPTH} levels`), deep.ok ? '' : deep.message);
    // The bulk messages (whole snapshots to the extension) take more than the ordinary ceiling.
    assert.ok(rpc.GenerationChanged.maxParamsChars > RPC_PARAMS_MAX_CHARS);
  });
});

describe('protocol/rpcSchema: jsonShapeProblem', () => {
  it('measures about the JSON text, stopping at the first bound crossed', () => {
    const value = { a: ['bc', 12, null, true], d: { e: 'f' } };
    const size = JSON.stringify(value).length;
    assert.equal(jsonShapeProblem(value, size * 2, 8), null);
    assert.match(jsonShapeProblem(value, Math.floor(size / 3), 8) ?? '', /over \d+ characters/);
    assert.match(jsonShapeProblem(value, size * 2, 1) ?? '', /deeper than 1 levels/);
    // A two-million-element array is refused by its length alone, without visiting its items.
    const started = Date.now();
    assert.match(jsonShapeProblem(new Array(2_000_000).fill(0), 1000, 8) ?? '', /over 1000 characters/);
    assert.ok(Date.now() - started < 2000);
  });

  it('never throws on any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 0, max: 200 }), fc.integer({ min: 0, max: 6 }), (value, maxChars, maxDepth) => {
        const problem = jsonShapeProblem(value, maxChars, maxDepth);
        assert.ok(problem === null || problem.length > 0);
      }),
      { numRuns: 300 },
    );
  });
});

import assert from 'node:assert/strict';
import { assignmentFromConfig, describeAssignment, HarnessConfigRefusal } from '../../../host/harness/harnessConfig';
import { Throttle } from '../../../host/review/runner';
import type { LmModelInfo } from '../../../protocol/rpc';
import { BOTH, config, MISSING, ports } from './harnessConfigFixtures';

const model = (vendor: string, id: string): LmModelInfo => ({ vendor, family: id, id, name: id, version: '1', maxInputTokens: 1000, toolCalling: true });

async function refused(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  await assert.rejects(promise, (e: unknown) => e instanceof HarnessConfigRefusal && pattern.test(e.message));
}

describe('the VS Code harness configuration → the pipeline’s assignment', () => {
  it('auto: the installed CLIs first (two providers review Flagged), discovered once', async () => {
    const p = ports(BOTH, [model('copilot', 'gpt')]);
    const a = await assignmentFromConfig(config({ default: 'auto' }), p);
    assert.equal(a.sequence?.kind, 'claude-code');
    assert.equal(a.noise?.kind, 'claude-code');
    assert.deepEqual(
      a.flagged.reviewers.map((h) => h.kind),
      ['claude-code', 'codex'],
    );
    assert.equal(a.flagged.compiler?.kind, 'claude-code');
    assert.equal(a.missingHint, undefined);
    assert.equal(p.discovered, 1);
    assert.deepEqual(p.listed, [], 'VS Code models are not asked for when a CLI is installed');
  });

  it('auto without CLIs: the VS Code chat models (a second review seat from another vendor, else another family of the same vendor), else none with a hint', async () => {
    const lm = await assignmentFromConfig(config({ default: 'auto', vscodeLm: { vendor: 'copilot' } }), ports(MISSING, [model('copilot', 'a'), model('copilot', 'b')]));
    assert.equal(lm.design?.kind, 'vscode-lm');
    assert.equal(lm.design?.model, 'copilot/a', 'the first model is pinned');
    assert.deepEqual(
      lm.flagged.reviewers.map((h) => h.model),
      ['copilot/a', 'copilot/b'],
      'one vendor, two families: two review seats',
    );
    const same = await assignmentFromConfig(config({ default: 'auto' }), ports(MISSING, [model('copilot', 'a'), model('copilot', 'a')]));
    assert.equal(same.flagged.reviewers.length, 1, 'one family: one review seat');
    const two = await assignmentFromConfig(config({ default: 'auto' }), ports(MISSING, [model('copilot', 'a'), model('other', 'x')]));
    assert.deepEqual(
      two.flagged.reviewers.map((h) => h.model),
      ['copilot/a', 'other/x'],
    );

    const p = ports(MISSING, new Error('Unhandled method rennet/lm/models'));
    const none = await assignmentFromConfig(config({ default: 'auto' }), p);
    assert.deepEqual([none.design, none.sequence, none.decisions, none.noise, none.flagged.compiler], [null, null, null, null, null]);
    assert.match(none.missingHint ?? '', /auto discovery found no model harness \(claude not found on PATH; codex not found on PATH; VS Code's chat models could not be listed/);
  });

  it('per-lens overrides: one instance per name, none where named, and a hint for it', async () => {
    const a = await assignmentFromConfig(
      config({
        default: 'openai',
        lenses: { flagged: 'anthropic', noise: 'none' },
        openai: { baseUrl: 'http://127.0.0.1:9/v1', model: 'm' },
        anthropic: { baseUrl: 'http://localhost:9', model: 'c' },
      }),
      ports(MISSING),
    );
    assert.equal(a.design?.kind, 'openai-compatible');
    assert.equal(a.design, a.sequence, 'one harness instance per name');
    assert.equal(a.flagged.compiler?.kind, 'anthropic');
    assert.deepEqual(a.flagged.reviewers, [a.flagged.compiler]);
    assert.equal(a.noise, null);
    assert.match(a.missingHint ?? '', /the settings choose no harness \(none\)/);
    assert.equal(describeAssignment(a), 'design: openai-compatible (m), sequence: openai-compatible (m), decisions: openai-compatible (m), flagged: anthropic (c) → anthropic (c), noise: none');
  });

  it('refuses what cannot be honoured, naming the setting and never a key', async () => {
    const key = 'sk-unit-secret';
    await refused(assignmentFromConfig(config({ default: 'openai', openai: { model: 'm' } }), ports(MISSING)), /openai harness at https:\/\/api\.openai\.com needs an API key/);
    await refused(assignmentFromConfig(config({ default: 'none', lenses: { decisions: 'anthropic' }, anthropic: { apiKey: key } }), ports(MISSING)), /set rennet\.harness\.anthropic\.model/);
    await refused(
      assignmentFromConfig(config({ default: 'openai', openai: { baseUrl: 'file:///x', model: 'm', apiKey: key } }), ports(MISSING)),
      /^rennet\.harness\.openai\.baseUrl is not an http\(s\) URL/,
    );
    await refused(assignmentFromConfig(config({ default: 'codex' }), ports(MISSING)), /codex harness is not available here: codex not found on PATH/);
    await refused(assignmentFromConfig(config({ default: 'vscode-lm', vscodeLm: { vendor: 'nobody' } }), ports(MISSING, [])), /no VS Code language model matches vendor "nobody"/);
    await refused(assignmentFromConfig(config({ default: 'none', lenses: { everything: 'auto' } }), ports(MISSING)), /unknown lens "everything"/);
    const ok = await assignmentFromConfig(config({ default: 'openai', openai: { baseUrl: 'https://models.example.com/v1', model: 'm', apiKey: key } }), ports(MISSING));
    assert.ok(!describeAssignment(ok).includes(key));
  });
});

describe('the generation push throttle', () => {
  it('coalesces pokes into one send per interval and always sends after the last poke', async () => {
    let sends = 0;
    const at: number[] = [];
    const t = new Throttle(40, () => {
      sends++;
      at.push(Date.now());
    });
    for (let i = 0; i < 100; i++) t.poke();
    assert.equal(sends, 0, 'a send never runs inside a poke');
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(sends, 1);
    t.poke();
    t.poke();
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(sends, 1, 'the second send waits for the interval');
    await new Promise((r) => setTimeout(r, 60));
    assert.equal(sends, 2, 'the last poke was sent');
    assert.ok((at[1] as number) - (at[0] as number) >= 35);
    t.poke();
    t.cancel();
    await new Promise((r) => setTimeout(r, 60));
    assert.equal(sends, 2, 'cancel drops a pending send');
  });

  it('sends a poke after a quiet interval as soon as the poker is done, ahead of timers and I/O queued before it', async () => {
    const order: string[] = [];
    const t = new Throttle(40, () => order.push('send'));
    setTimeout(() => order.push('timer'), 0);
    setImmediate(() => order.push('immediate'));
    t.poke();
    t.poke();
    assert.deepEqual(order, [], 'a send never runs inside a poke');
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(order.slice().sort(), ['immediate', 'send', 'timer']);
    assert.equal(order[0], 'send', order.join(', '));
    t.poke();
    await new Promise((r) => setImmediate(r));
    assert.equal(order.filter((o) => o === 'send').length, 1, 'inside the interval a poke waits for it');
    t.cancel();
  });

  it('flush sends at once and drops the pending send', async () => {
    let sends = 0;
    const t = new Throttle(40, () => sends++);
    t.poke();
    await new Promise((r) => setImmediate(r));
    t.poke();
    t.flush();
    assert.equal(sends, 2);
    await new Promise((r) => setTimeout(r, 60));
    assert.equal(sends, 2, 'the pending send was dropped');
  });
});

import * as assert from 'node:assert/strict';
import { deltaAppliesOn, GenerationFold, withoutRevision } from '../../../extension/generationFold';
import type { GenerationDelta, GenerationSnapshot } from '../../../protocol';
import { generation } from '../webview/boardFixtures';

/**
 * The extension's fold of the host's generation pushes (extension/generationFold.ts): whole
 * snapshots replace a session's generation, deltas fold on it, and one that does not apply
 * changes nothing (the host client then reads the generation whole).
 */

const STREAM = 'g-0011223344556677.s1';
const held = (n: number, sessionId = 'ses-1'): GenerationSnapshot => ({ ...generation(), sessionId, revision: { stream: STREAM, n } });
const delta = (base: number, sessionId = 'ses-1'): GenerationDelta => ({
  sessionId,
  generationId: 'g-0011223344556677',
  stream: STREAM,
  baseRevision: base,
  revision: base + 1,
  lane: { lens: 'design', state: 'working' },
});

describe('extension/generationFold', () => {
  it("folds deltas on the session's generation, per session; a whole snapshot replaces it", () => {
    const fold = new GenerationFold();
    fold.whole(held(0));
    fold.whole(held(4, 'ses-2'));
    const one = fold.delta(delta(0));
    assert.ok(one.ok);
    assert.equal(fold.get('ses-1')?.revision?.n, 1);
    assert.equal(fold.get('ses-1')?.lanes.find((l) => l.lens === 'design')?.state, 'working');
    assert.ok(fold.delta(delta(4, 'ses-2')).ok, 'another session folds on its own generation');
    assert.equal(fold.get('ses-2')?.revision?.n, 5);
    fold.whole(held(9));
    assert.equal(fold.get('ses-1')?.revision?.n, 9);
  });

  it('a delta that does not apply changes nothing held and says why', () => {
    const fold = new GenerationFold();
    assert.equal((fold.delta(delta(0)) as { refusal: string }).refusal, 'no-generation');
    fold.whole(held(2));
    const before = fold.get('ses-1');
    const gap = fold.delta(delta(5));
    assert.equal(gap.ok ? 'ok' : gap.refusal, 'gap');
    assert.equal(fold.get('ses-1'), before);
    fold.clear();
    assert.equal(fold.get('ses-1'), undefined, 'a new host process: everything is read whole again');
  });

  it("deltaAppliesOn: the same generation and stream, at the delta's base", () => {
    assert.equal(deltaAppliesOn(held(3), delta(3)), true);
    assert.equal(deltaAppliesOn(held(3), delta(2)), false);
    assert.equal(deltaAppliesOn({ ...held(3), revision: { stream: 'other', n: 3 } }, delta(3)), false);
    assert.equal(deltaAppliesOn({ ...held(3), revision: undefined }, delta(3)), false);
    assert.equal(deltaAppliesOn(undefined, delta(3)), false);
    assert.equal(deltaAppliesOn(null, delta(3)), false);
  });

  it('withoutRevision: what a generation says, the push bookkeeping off', () => {
    const g = held(3);
    const bare = withoutRevision(g);
    assert.equal('revision' in bare, false);
    assert.deepEqual({ ...bare, revision: g.revision }, g);
    const plain = generation();
    assert.equal(withoutRevision(plain), plain, 'nothing to take off: the same object');
  });
});

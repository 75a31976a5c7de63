import * as assert from 'node:assert/strict';
import { errorMessage } from '../../../protocol/result';
import { describeError } from '../../../host/store/errors';

describe('protocol/result: errorMessage, the text of any thrown value', () => {
  it('an Error gives its message, without the name', () => {
    assert.equal(errorMessage(new TypeError('bad input')), 'bad input');
  });

  it('a string is its own message; other values read as JSON, else String', () => {
    assert.equal(errorMessage('plain'), 'plain');
    assert.equal(errorMessage({ status: 500 }), '{"status":500}');
    assert.equal(errorMessage(42), '42');
    assert.equal(errorMessage(undefined), 'undefined');
    assert.equal(errorMessage(null), 'null');
    assert.equal(errorMessage(10n), '10');
  });

  it('an object with a message string gives that message', () => {
    assert.equal(errorMessage({ message: 'from a worker', code: 7 }), 'from a worker');
  });

  it('a cause chain follows in parentheses, skipping what the text already says', () => {
    const root = new Error('connect ECONNREFUSED 127.0.0.1:9');
    assert.equal(errorMessage(new Error('fetch failed', { cause: root })), 'fetch failed (connect ECONNREFUSED 127.0.0.1:9)');
    assert.equal(errorMessage(new Error('a', { cause: new Error('b', { cause: 'c' }) })), 'a (b) (c)');
    assert.equal(errorMessage(new Error(`saving: ${root.message}`, { cause: root })), `saving: ${root.message}`);
  });

  it('a cycle of causes ends', () => {
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    (a as { cause?: unknown }).cause = b;
    assert.equal(errorMessage(a), 'a (b)');
  });

  it("the store's describeError adds a Node error code the message lacks", () => {
    assert.equal(describeError(Object.assign(new Error('disk full'), { code: 'ENOSPC' })), 'ENOSPC: disk full');
    assert.equal(describeError(Object.assign(new Error('ENOENT: no such file'), { code: 'ENOENT' })), 'ENOENT: no such file');
    assert.equal(describeError('plain'), 'plain');
  });
});

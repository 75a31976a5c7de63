import * as assert from 'node:assert/strict';
import { askEventKind, type AskCommand, type AskReceipt } from '../../../protocol/asks';
import type { Result } from '../../../protocol/result';
import { AskLog, type AskAppend, type AskCommandOutcome, type AskLogStore } from '../../../host/asks/log';
import { foldAsks } from '../../../host/asks/fold';
import { decodeAskEvent } from '../../../host/asks/log';
import { Store } from '../../../host/store';
import { WASM_PATH, tempDirs } from '../store/helpers';
import { inapplicableCommand, prng, validCommand } from './gen';

const NOW = '2026-03-01T10:00:00.000Z';

function value<T>(result: Result<T>): T {
  if (!result.ok) assert.fail(`expected ok, got ${result.error.code}: ${result.error.message}`);
  return result.value;
}

function refusal<T>(result: Result<T>): string {
  if (result.ok) assert.fail('expected a refusal');
  return result.error.detail?.refusal ?? result.error.code;
}

async function openStore(dir: string): Promise<Store> {
  return Store.open(dir, { wasmPath: WASM_PATH, compactEvery: 25 });
}

function newSession(store: Store, head = 'feature'): string {
  return store.getOrCreateSession({ repoRoot: '/repo/asks', target: { kind: 'branch', head, base: 'main' }, now: NOW }).session.id;
}

const stage = (text: string, extra: Partial<Extract<AskCommand, { type: 'stage' }>> = {}): AskCommand => ({
  type: 'stage',
  anchor: { kind: 'none' },
  text,
  intent: 'comment',
  lane: 'post-review',
  ...extra,
});

describe('asks: the durable ask log over the store', function () {
  this.timeout(60_000);
  const dirs = tempDirs('rennet-asks-');
  after(() => dirs.cleanup());

  it('a restarted host folds the identical projection from the same log', async () => {
    const dir = dirs.make();
    let store = await openStore(dir);
    const sessionId = newSession(store);
    const log = new AskLog(store);
    const a = value(log.command(sessionId, stage('Rename the flag'), NOW));
    const b = value(
      log.command(
        sessionId,
        stage('Add a test', { intent: 'request-change', lane: 'dispatch-round', anchor: { kind: 'line', patchsetId: 'ps-a', path: 'src/x.ts', side: 'head', startLine: 3, endLine: 8 } }),
        NOW,
      ),
    );
    const bId = b.event.type === 'stage' ? b.event.askId : '';
    value(log.command(sessionId, { type: 'edit', askId: bId, text: 'Add a regression test' }, NOW));
    value(log.command(sessionId, { type: 'retire', askId: a.event.type === 'stage' ? a.event.askId : '', reason: 'done in round 1' }, NOW));
    const thread = value(log.command(sessionId, { type: 'quoteOpen', anchor: { kind: 'quote', generationId: 'g-1', lens: 'decisions', elementId: 'e3', quote: 'we chose sql.js' } }, NOW));
    const threadId = thread.event.type === 'quoteOpen' ? thread.event.threadId : '';
    value(log.command(sessionId, { type: 'quoteReply', threadId, author: 'reviewer', text: 'Why not better-sqlite3?' }, NOW));
    value(log.command(sessionId, { type: 'setVerdictOverride', verdict: 'request-changes' }, NOW));
    value(log.command(sessionId, { type: 'setLineComment', anchor: { patchsetId: 'ps-a', path: 'src/x.ts', side: 'base', startLine: 10, endLine: 10 }, text: 'nit: typo' }, NOW));
    const last = value(log.command(sessionId, { type: 'dismissFinding', generationId: 'g-1', boardId: `${sessionId}/g-1/flagged`, findingId: 'e9' }, NOW));
    const before = value(log.projection(sessionId));
    assert.deepStrictEqual(before, last.projection);
    assert.equal(before.counts.staged, 1);
    assert.deepEqual(before.counts.byLane, { 'post-review': 0, 'dispatch-round': 1, changes: 0 });
    assert.equal(store.countEvents(sessionId), 9, 'one event per command');
    store.close();

    store = await openStore(dir);
    try {
      const reopened = new AskLog(store);
      assert.deepStrictEqual(value(reopened.projection(sessionId)), before);
      const fresh = value(reopened.read(sessionId));
      assert.deepStrictEqual(fresh.projection, before);
      assert.deepEqual(fresh.skipped, []);
      assert.equal(fresh.lastSeq, 9);
      // The log holds kind ask.<type> with the event as payload.
      assert.deepEqual(
        store.readEvents(sessionId).map((e) => e.kind),
        ['ask.stage', 'ask.stage', 'ask.edit', 'ask.retire', 'ask.quoteOpen', 'ask.quoteReply', 'ask.setVerdictOverride', 'ask.setLineComment', 'ask.dismissFinding'],
      );
    } finally {
      store.close();
    }
  });

  it('a refusal appends nothing', async () => {
    const store = await openStore(dirs.make());
    try {
      const sessionId = newSession(store);
      const log = new AskLog(store);
      const staged = value(log.command(sessionId, stage('Keep this'), NOW));
      const askId = staged.event.type === 'stage' ? staged.event.askId : '';
      const count = store.countEvents(sessionId);
      const cases: Array<[unknown, string]> = [
        [{ type: 'edit', askId: 'ask-missing', text: 'x' }, 'unknown-ask'],
        [{ type: 'edit', askId, text: 'Keep this' }, 'no-change'],
        [{ type: 'restore', askId }, 'not-retired'],
        [{ type: 'quoteReply', threadId: 'qt-missing', author: 'reviewer', text: 'hello' }, 'unknown-thread'],
        [{ type: 'clearLineComment', key: 'ps-a|head|a.ts:1-1' }, 'unknown-line-comment'],
        [{ type: 'restoreFinding', generationId: 'g-1', boardId: `${sessionId}/g-1/flagged`, findingId: 'e1' }, 'not-dismissed'],
        [{ type: 'dismissFinding', generationId: 'g-1', boardId: 's-else/g-1/flagged', findingId: 'e1' }, 'wrong-session'],
        [{ type: 'setVerdictOverride', verdict: null }, 'no-change'],
        [{ type: 'stage', anchor: { kind: 'none' }, text: '   ', intent: 'comment', lane: 'post-review' }, 'invalid'],
        [{ type: 'stage', anchor: { kind: 'none' }, text: 'x'.repeat(64 * 1024 + 1), intent: 'comment', lane: 'post-review' }, 'invalid'],
        [{ type: 'stage', anchor: { kind: 'none' }, text: 'x', intent: 'comment', lane: 'post-review', askId: 'mine' }, 'invalid'],
        [{ type: 'launch' }, 'invalid'],
        [null, 'invalid'],
      ];
      for (const [command, code] of cases) {
        assert.equal(refusal(log.command(sessionId, command, NOW)), code, JSON.stringify(command)?.slice(0, 120));
      }
      assert.equal(log.command('s-nobody', stage('x'), NOW).ok, false);
      assert.equal(store.countEvents(sessionId), count, 'no refusal appended anything');
      assert.equal(store.countEvents(), count);
    } finally {
      store.close();
    }
  });

  it('undo appends the receipt’s inverse as the next event, once; undo of the undo redoes', async () => {
    const dir = dirs.make();
    let store = await openStore(dir);
    const sessionId = newSession(store);
    const pushed: AskAppend[] = [];
    let log = new AskLog(store, { onAppend: (change) => pushed.push(change) });
    const first = value(log.command(sessionId, stage('first'), NOW));
    const staged = value(log.command(sessionId, stage('second'), NOW));
    const askId = staged.event.type === 'stage' ? staged.event.askId : '';
    const edited = value(log.command(sessionId, { type: 'edit', askId, text: 'second, edited', intent: 'request-change' }, NOW));
    assert.deepEqual(edited.receipt.event, { type: 'edit', askId, text: 'second', intent: 'comment', editedAt: null });

    const undone = value(log.undo(sessionId, edited.receipt, NOW));
    assert.equal(undone.seq, edited.seq + 1, 'undo is the next append');
    assert.deepStrictEqual(undone.projection, staged.projection, 'the projection before the edit, exactly');
    assert.equal(store.countEvents(sessionId), 4, 'nothing was deleted');
    assert.equal(refusal(log.undo(sessionId, edited.receipt, NOW)), 'already-undone');

    const redone = value(log.undo(sessionId, undone.receipt, NOW));
    assert.deepStrictEqual(redone.projection, edited.projection, 'undo of the undo redoes');
    assert.deepEqual(
      pushed.map((p) => p.seq),
      [1, 2, 3, 4, 5],
      'one push per append',
    );
    assert.deepStrictEqual(pushed.at(-1)?.projection, redone.projection);

    // Forged or mismatched receipts are refused and append nothing.
    const forged: AskReceipt = { undoes: first.seq, event: { type: 'unstage', askId } };
    assert.equal(refusal(log.undo(sessionId, forged, NOW)), 'unknown-receipt');
    assert.equal(refusal(log.undo(sessionId, { undoes: 99, event: first.receipt.event }, NOW)), 'unknown-receipt');
    assert.equal(refusal(log.undo(sessionId, { undoes: 'x' }, NOW)), 'invalid');
    assert.equal(store.countEvents(sessionId), 5);

    // A receipt stays valid across a restart (the check reads the log), and still only once.
    store.close();
    store = await openStore(dir);
    log = new AskLog(store);
    const unstaged = value(log.undo(sessionId, staged.receipt, NOW));
    assert.deepStrictEqual(unstaged.projection, first.projection);
    assert.equal(refusal(log.undo(sessionId, staged.receipt, NOW)), 'already-undone');
    store.close();
  });

  it('a stale receipt whose inverse no longer applies is refused', async () => {
    const store = await openStore(dirs.make());
    try {
      const sessionId = newSession(store);
      const log = new AskLog(store);
      const staged = value(log.command(sessionId, stage('to retire'), NOW));
      const askId = staged.event.type === 'stage' ? staged.event.askId : '';
      value(log.command(sessionId, { type: 'retire', askId }, NOW));
      const count = store.countEvents(sessionId);
      // Undoing the stage would unstage a retired ask: not applicable any more.
      assert.equal(refusal(log.undo(sessionId, staged.receipt, NOW)), 'not-staged');
      assert.equal(store.countEvents(sessionId), count);
    } finally {
      store.close();
    }
  });

  it('ignores other kinds of events in the session log', async () => {
    const store = await openStore(dirs.make());
    try {
      const sessionId = newSession(store);
      const log = new AskLog(store);
      store.appendEvent(sessionId, 'review.note', { anything: true }, NOW);
      const a = value(log.command(sessionId, stage('after a foreign event'), NOW));
      store.appendEvent(sessionId, 'generation.started', { id: 'g-1' }, NOW);
      store.appendEvent(sessionId, 'ask.bogus', { type: 'bogus' }, NOW);
      const b = value(log.command(sessionId, stage('second'), NOW));
      assert.equal(a.seq, 2);
      assert.equal(b.seq, 5);
      const fresh = value(log.read(sessionId));
      assert.deepStrictEqual(fresh.projection, b.projection);
      assert.deepEqual(
        fresh.skipped.map((s) => s.seq),
        [4],
        'an unreadable ask.* event is reported, not folded',
      );
      assert.deepEqual(
        b.projection.asks.map((x) => x.ordinal),
        [2, 5],
        'ordinals are the log seqs the stages got',
      );
    } finally {
      store.close();
    }
  });

  it('random command and undo sequences through the store: the cache always equals a fresh fold', async () => {
    const dir = dirs.make();
    let store = await openStore(dir);
    const sessionId = newSession(store);
    let log = new AskLog(store);
    const r = prng(20260301);
    const receipts: AskReceipt[] = [];
    for (let i = 0; i < 160; i++) {
      const p = value(log.projection(sessionId));
      const count = store.countEvents(sessionId);
      const roll = r.next();
      let result: Result<AskCommandOutcome>;
      if (roll < 0.15) {
        const command = inapplicableCommand(r, p);
        if (!command) continue;
        result = log.command(sessionId, command, NOW);
        assert.equal(result.ok, false, `step ${i}: ${JSON.stringify(command)} should be refused`);
        assert.equal(store.countEvents(sessionId), count);
        continue;
      }
      if (roll < 0.3 && receipts.length > 0) {
        result = log.undo(sessionId, r.pick(receipts), NOW);
        if (!result.ok) {
          assert.equal(store.countEvents(sessionId), count, 'a refused undo appends nothing');
          continue;
        }
      } else {
        const command = validCommand(r, p);
        // The generator names findings of its own session id; point them at this one.
        const json = JSON.stringify(command).replaceAll('s-test/', `${sessionId}/`);
        result = log.command(sessionId, JSON.parse(json), NOW);
        assert.ok(result.ok, `step ${i}: ${json} refused: ${result.ok ? '' : result.error.message}`);
      }
      const outcome = value(result);
      assert.equal(store.countEvents(sessionId), count + 1, 'exactly one event per command');
      receipts.push(outcome.receipt);
      const fresh = value(new AskLog(store).read(sessionId));
      assert.deepStrictEqual(outcome.projection, fresh.projection, `step ${i}: cached projection differs from a fresh fold`);
      assert.deepEqual(fresh.skipped, []);
      if (i % 40 === 39) {
        store.close();
        store = await openStore(dir);
        log = new AskLog(store);
        assert.deepStrictEqual(value(log.projection(sessionId)), outcome.projection, 'same after a restart');
      }
    }
    const events = store
      .readEvents(sessionId)
      .map(decodeAskEvent)
      .flatMap((d) => (d?.ok ? [d.event] : []));
    assert.deepStrictEqual(foldAsks(events), value(log.projection(sessionId)));
    store.close();
  });

  it('two hosts on one store: each catches up on the other’s appends, and a lost race is reported', async () => {
    const store = await openStore(dirs.make());
    try {
      const sessionId = newSession(store);
      const left = new AskLog(store);
      const right = new AskLog(store);
      const a = value(left.command(sessionId, stage('from the left'), NOW));
      const askId = a.event.type === 'stage' ? a.event.askId : '';
      assert.deepStrictEqual(value(right.projection(sessionId)), a.projection);
      value(right.command(sessionId, { type: 'edit', askId, text: 'edited on the right' }, NOW));
      assert.equal(value(left.projection(sessionId)).asks[0]?.text, 'edited on the right');

      // Another writer slips an unstage in between our check and our append: our edit is inert.
      let interloper: (() => void) | undefined;
      const racing: AskLogStore = {
        getSession: (id) => store.getSession(id),
        readEvents: (id, after) => store.readEvents(id, after),
        appendEvent: (id, kind, payload, now) => {
          const slip = interloper;
          interloper = undefined;
          slip?.();
          return store.appendEvent(id, kind, payload, now);
        },
      };
      const pushed: AskAppend[] = [];
      const raced = new AskLog(racing, { onAppend: (c) => pushed.push(c) });
      value(raced.projection(sessionId));
      interloper = () => store.appendEvent(sessionId, askEventKind('unstage'), { type: 'unstage', askId }, NOW);
      const lost = raced.command(sessionId, { type: 'edit', askId, text: 'too late' }, NOW);
      assert.equal(refusal(lost), 'unknown-ask');
      assert.deepEqual(value(raced.projection(sessionId)).asks, []);
      assert.deepStrictEqual(pushed.at(-1)?.projection, value(left.projection(sessionId)));
      assert.deepEqual(
        value(left.read(sessionId)).skipped.map((s) => s.reason.split(':')[0]),
        ['unknown-ask'],
      );

      // A benign race (another ask staged meanwhile): the receipt is computed where the event really landed.
      interloper = () => value(left.command(sessionId, stage('interleaved'), NOW));
      const won = value(raced.command(sessionId, stage('mine'), NOW));
      assert.deepEqual(
        won.projection.asks.map((x) => x.text),
        ['interleaved', 'mine'],
      );
      const undone = value(raced.undo(sessionId, won.receipt, NOW));
      assert.deepEqual(
        undone.projection.asks.map((x) => x.text),
        ['interleaved'],
      );
    } finally {
      store.close();
    }
  });

  it('appendHostEvent: a quoteAnchor is validated, appended once, pushed, undoable, and refolds the same after a restart', async () => {
    const dir = dirs.make();
    let store = await openStore(dir);
    const sessionId = newSession(store);
    const pushed: AskAppend[] = [];
    let log = new AskLog(store, { onAppend: (change) => pushed.push(change) });
    const from = { kind: 'quote', generationId: 'g-1', lens: 'design', elementId: 'e3', quote: 'the cache is global' } as const;
    const opened = value(log.command(sessionId, { type: 'quoteOpen', anchor: from }, NOW));
    const threadId = opened.event.type === 'quoteOpen' ? opened.event.threadId : '';
    value(log.command(sessionId, { type: 'quoteReply', threadId, author: 'reviewer', text: 'Why global?' }, NOW));
    const count = store.countEvents(sessionId);

    // Refused, appending nothing: not an event, an invalid anchor, a reviewer's event type, no change, no thread.
    const cases: Array<[unknown, string]> = [
      [{ type: 'quoteAnchor', threadId }, 'invalid'],
      [{ type: 'quoteAnchor', threadId, anchor: { ...from, elementId: 'not/an id' }, detached: false }, 'invalid'],
      [{ type: 'quoteAnchor', threadId, anchor: { ...from, lens: 'plot' }, detached: false }, 'invalid'],
      [{ type: 'quoteClose', threadId }, 'invalid'],
      [{ type: 'quoteDiscard', threadId }, 'invalid'],
      [{ type: 'quoteAnchor', threadId, anchor: from, detached: false }, 'no-change'],
      [{ type: 'quoteAnchor', threadId: 'qt-nope', anchor: from, detached: true }, 'unknown-thread'],
    ];
    for (const [event, code] of cases) assert.equal(refusal(log.appendHostEvent(sessionId, event, NOW)), code, JSON.stringify(event));
    assert.equal(store.countEvents(sessionId), count, 'no refusal appended anything');

    const detached = value(log.appendHostEvent(sessionId, { type: 'quoteAnchor', threadId, anchor: from, detached: true }, NOW));
    assert.equal(detached.seq, count + 1);
    assert.equal(store.readEvents(sessionId).at(-1)?.kind, 'ask.quoteAnchor');
    assert.equal(detached.projection.quoteThreads[threadId]?.detached, true);
    assert.deepEqual(detached.receipt.event, { type: 'quoteAnchor', threadId, anchor: from, detached: false });
    assert.deepStrictEqual(pushed.at(-1)?.projection, detached.projection, 'pushed like any append');

    // A detached thread takes replies and closes through ordinary commands.
    value(log.command(sessionId, { type: 'quoteReply', threadId, author: 'agent', text: 'Shared by design.' }, NOW));
    const closed = value(log.command(sessionId, { type: 'quoteClose', threadId }, NOW));
    assert.equal(closed.projection.quoteThreads[threadId]?.open, false);
    assert.equal(closed.projection.quoteThreads[threadId]?.detached, true);
    assert.equal(closed.projection.quoteThreads[threadId]?.messages.length, 2);

    store.close();
    store = await openStore(dir);
    log = new AskLog(store);
    assert.deepStrictEqual(value(log.read(sessionId)).projection, closed.projection, 'a restarted host folds it the same');
    // Its receipt still undoes it (checked against the log), once.
    const undone = value(log.undo(sessionId, detached.receipt, NOW));
    assert.equal(undone.projection.quoteThreads[threadId]?.detached, false);
    assert.equal(refusal(log.undo(sessionId, detached.receipt, NOW)), 'already-undone');
    store.close();
  });

  it('reanchorQuoteThreads: after a round, threads of the prior generation move or detach in the log', async () => {
    const store = await openStore(dirs.make());
    try {
      const sessionId = newSession(store);
      const log = new AskLog(store);
      const open = (generationId: string, elementId: string, quote: string) => {
        const x = value(log.command(sessionId, { type: 'quoteOpen', anchor: { kind: 'quote', generationId, lens: 'design', elementId, quote } }, NOW));
        return x.event.type === 'quoteOpen' ? x.event.threadId : '';
      };
      const unique = open('g-1', 'e3', 'the cache is global');
      const gone = open('g-1', 'e4', 'a sentence the new board dropped');
      const older = open('g-0', 'e3', 'the cache is global');
      value(log.command(sessionId, { type: 'quoteReply', threadId: unique, author: 'reviewer', text: 'Why global?' }, NOW));
      const count = store.countEvents(sessionId);
      const successor = {
        generationId: 'g-2',
        boards: { design: [{ id: 'e9', parent: null, author: 'claude', seq: 9, kind: 'prose', markdown: 'Here the cache is global.' } as const] },
      };
      const applied = value(log.reanchorQuoteThreads(sessionId, 'g-1', successor, NOW));
      assert.deepEqual(
        applied.map((a) => [a.threadId, a.outcome.kind, a.appended.ok]).sort(),
        [
          [gone, 'detached', true],
          [unique, 'moved', true],
        ].sort(),
      );
      assert.equal(store.countEvents(sessionId), count + 2, 'one event per re-anchored thread');
      const p = value(new AskLog(store).read(sessionId)).projection;
      assert.deepEqual(p.quoteThreads[unique]?.anchor, { kind: 'quote', generationId: 'g-2', lens: 'design', elementId: 'e9', quote: 'the cache is global' });
      assert.equal(p.quoteThreads[unique]?.detached, false);
      assert.deepEqual(
        p.quoteThreads[unique]?.messages.map((m) => m.text),
        ['Why global?'],
      );
      assert.equal(p.quoteThreads[gone]?.detached, true);
      assert.equal(p.quoteThreads[gone]?.anchor.generationId, 'g-1');
      assert.equal(p.quoteThreads[older]?.anchor.generationId, 'g-0', 'a thread of another generation is untouched');
      // Nothing left to do for that round.
      assert.deepEqual(value(log.reanchorQuoteThreads(sessionId, 'g-1', successor, NOW)), []);
      assert.equal(store.countEvents(sessionId), count + 2);
    } finally {
      store.close();
    }
  });
});

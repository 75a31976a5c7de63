import * as assert from 'node:assert/strict';
import { ASK_EVENT_TYPES, AskEvent, AskProjection, type AskCommand } from '../../../protocol/asks';
import { mintAskEvent, parseAskCommand } from '../../../host/asks/commands';
import { EMPTY_ASK_PROJECTION, applyAskEvent, checkAskEvent, foldAskLog, foldAsks, inverseOf, stepAsks } from '../../../host/asks/fold';
import { canonicalJson } from '../../../host/asks/log';
import { inapplicableCommand, prng, testContext, validCommand, validHostEvent } from './gen';

const SEQUENCES = 400;

/** Parse (as the host does), mint against `p`: the event, or the refusal. */
function mint(p: AskProjection, command: AskCommand, ctx: ReturnType<typeof testContext>, ordinal: number) {
  const parsed = parseAskCommand(command);
  assert.ok(parsed.ok, `generated command does not parse: ${JSON.stringify(command)} ${parsed.ok ? '' : parsed.refusal.message}`);
  return mintAskEvent(p, parsed.command, ctx(ordinal));
}

describe('asks fold: properties over generated command sequences', function () {
  this.timeout(120_000);

  it(`undo restores the prior projection exactly, replay equals incremental, refusals change nothing (${SEQUENCES} seeded sequences)`, () => {
    const seenTypes = new Map<string, number>();
    const seenRefusals = new Map<string, number>();
    let steps = 0;
    for (let seed = 1; seed <= SEQUENCES; seed++) {
      const r = prng(seed);
      const ctx = testContext();
      let p = EMPTY_ASK_PROJECTION;
      const log: AskEvent[] = [];
      const history: AskProjection[] = [p];
      const receipts: AskEvent[] = [];
      const length = 10 + r.int(90);
      for (let i = 0; i < length; i++) {
        const roll = r.next();
        let event: AskEvent;
        if (roll < 0.05) {
          // A host event that does not apply (unknown thread, or a thread already so): refused, nothing changes.
          const threads = Object.entries(p.quoteThreads);
          const some = threads.length > 0 && r.int(2) === 0 ? r.pick(threads) : undefined;
          const inert: AskEvent = some
            ? { type: 'quoteAnchor', threadId: some[0], anchor: { ...some[1].anchor }, detached: some[1].detached }
            : { type: 'quoteAnchor', threadId: 'qt-nope', anchor: { kind: 'quote', generationId: 'g-one', lens: 'design', elementId: 'e1', quote: 'x' }, detached: true };
          const refusal = checkAskEvent(p, inert);
          assert.equal(refusal?.code, some ? 'no-change' : 'unknown-thread');
          seenRefusals.set(refusal?.code ?? '', (seenRefusals.get(refusal?.code ?? '') ?? 0) + 1);
          assert.equal(applyAskEvent(p, inert), p);
          continue;
        }
        if (roll < 0.2) {
          // A well-formed command that does not apply: refused, nothing changes.
          const command = inapplicableCommand(r, p);
          if (!command) continue;
          const minted = mint(p, command, ctx, log.length + 1);
          const refusal = minted.ok ? checkAskEvent(p, minted.event) : minted.refusal;
          assert.ok(refusal, `seed ${seed} step ${i}: ${JSON.stringify(command)} should be refused`);
          seenRefusals.set(refusal.code, (seenRefusals.get(refusal.code) ?? 0) + 1);
          if (minted.ok) {
            assert.equal(applyAskEvent(p, minted.event), p, 'a refused event leaves the very same projection');
            assert.deepEqual(foldAskLog([...log, minted.event]).projection, p, 'a refused event in the log is skipped');
          }
          continue;
        }
        if (roll < 0.35 && receipts.length > 0) {
          // An earlier receipt, applied late: applies (undo) or is refused unchanged.
          event = r.pick(receipts);
          const refusal = checkAskEvent(p, event);
          if (refusal) {
            seenRefusals.set(refusal.code, (seenRefusals.get(refusal.code) ?? 0) + 1);
            assert.equal(applyAskEvent(p, event), p);
            continue;
          }
        } else {
          // Now and then the host re-anchors (or detaches) a thread: an event no command makes.
          const host = roll < 0.45 ? validHostEvent(r, p) : undefined;
          if (host) event = host;
          else {
            const minted = mint(p, validCommand(r, p), ctx, log.length + 1);
            assert.ok(minted.ok, `seed ${seed} step ${i}: valid command refused at mint: ${minted.ok ? '' : minted.refusal.message}`);
            event = minted.event;
          }
        }
        assert.ok(AskEvent.safeParse(event).success, 'every event matches the log schema');
        const pJson = canonicalJson(p);
        const eventJson = canonicalJson(event);

        const step = stepAsks(p, event);
        assert.ok(step.ok, `seed ${seed} step ${i}: ${event.type} refused: ${step.ok ? '' : step.refusal.message}`);
        // The receipt is computed against the projection BEFORE the event, and undoes it exactly.
        assert.deepStrictEqual(inverseOf(p, event), step.inverse);
        const undone = stepAsks(step.projection, step.inverse);
        assert.ok(undone.ok, `seed ${seed} step ${i}: the inverse of ${event.type} (${step.inverse.type}) is refused`);
        assert.deepStrictEqual(undone.projection, p, `seed ${seed} step ${i}: undo of ${event.type} does not restore the projection`);
        // The inverse of the inverse is the event itself (undo of an undo redoes).
        assert.deepStrictEqual(undone.inverse, event);
        // Pure: nothing passed in was mutated, and the output is frozen.
        assert.equal(canonicalJson(p), pJson);
        assert.equal(canonicalJson(event), eventJson);
        assert.ok(Object.isFrozen(step.projection) && Object.isFrozen(step.projection.asks));
        assert.deepStrictEqual(applyAskEvent(p, event), step.projection);

        for (const t of [event.type, step.inverse.type]) seenTypes.set(t, (seenTypes.get(t) ?? 0) + 1);
        log.push(event);
        receipts.push(step.inverse);
        p = step.projection;
        history.push(p);
        steps += 1;
      }
      // Replaying the log from scratch gives the incrementally built projection, at the end and at a prefix.
      const replay = foldAskLog(log);
      assert.deepEqual(replay.skipped, []);
      assert.deepStrictEqual(replay.projection, p, `seed ${seed}: replay differs from incremental`);
      assert.equal(canonicalJson(foldAsks(log)), canonicalJson(p), 'equal down to key order');
      const k = r.int(log.length + 1);
      assert.deepStrictEqual(foldAsks(log.slice(0, k)), history[k]);
      // Folding the rest onto a prefix's projection is the same as folding from empty.
      assert.deepStrictEqual(foldAskLog(log.slice(k), history[k]).projection, p);
      assert.ok(AskProjection.safeParse(p).success, 'the projection matches its schema');
      // Asks are in staging order: the order their ids were first staged in the log.
      const firstStaged = new Map<string, number>();
      log.forEach((e, n) => {
        if (e.type === 'stage' && !firstStaged.has(e.askId)) firstStaged.set(e.askId, n);
      });
      const order = p.asks.map((a) => a.id);
      assert.deepEqual(
        order,
        [...order].sort((a, b) => (firstStaged.get(a) ?? 0) - (firstStaged.get(b) ?? 0)),
        `seed ${seed}: asks out of staging order`,
      );
      const staged = p.asks.filter((a) => a.state === 'staged');
      assert.equal(p.counts.staged, staged.length);
      for (const lane of Object.keys(p.counts.byLane)) {
        assert.equal(p.counts.byLane[lane as keyof typeof p.counts.byLane], staged.filter((a) => a.lane === lane).length);
      }
    }
    for (const type of ASK_EVENT_TYPES) assert.ok((seenTypes.get(type) ?? 0) > 0, `no ${type} event was exercised`);
    assert.ok(steps > SEQUENCES * 20, `only ${steps} steps`);
    assert.ok(seenRefusals.size >= 10, `refusal codes exercised: ${[...seenRefusals.keys()].join(', ')}`);
  });
});

describe('asks fold: each event and its inverse', () => {
  const ctx = testContext();
  let ordinal = 0;
  const run = (p: AskProjection, command: AskCommand) => {
    const minted = mint(p, command, ctx, ++ordinal);
    assert.ok(minted.ok, minted.ok ? '' : minted.refusal.message);
    const step = stepAsks(p, minted.event);
    assert.ok(step.ok, step.ok ? '' : step.refusal.message);
    return { event: minted.event, inverse: step.inverse, p: step.projection };
  };

  it('pairs every command with its inverse event type', () => {
    let p = EMPTY_ASK_PROJECTION;
    const pairs: string[] = [];
    const note = (x: ReturnType<typeof run>) => {
      pairs.push(`${x.event.type}->${x.inverse.type}`);
      p = x.p;
      return x;
    };
    const staged = note(run(p, { type: 'stage', anchor: { kind: 'none' }, text: 'Please split this function', intent: 'request-change', lane: 'dispatch-round' }));
    const askId = staged.event.type === 'stage' ? staged.event.askId : '';
    note(run(p, { type: 'edit', askId, text: 'Split it in two' }));
    note(run(p, { type: 'retire', askId, reason: 'addressed' }));
    note(run(p, { type: 'restore', askId }));
    const opened = note(run(p, { type: 'quoteOpen', anchor: { kind: 'quote', generationId: 'g-one', lens: 'design', elementId: 'e4', quote: 'the cache is global' } }));
    const threadId = opened.event.type === 'quoteOpen' ? opened.event.threadId : '';
    const reply = note(run(p, { type: 'quoteReply', threadId, author: 'reviewer', text: 'Why global?' }));
    note(run(p, { type: 'quoteClose', threadId }));
    note(run(p, { type: 'quoteOpen', threadId }));
    note(run(p, { type: 'setVerdictOverride', verdict: 'approve' }));
    note(run(p, { type: 'setLineComment', anchor: { patchsetId: 'ps-a', path: 'src/a.ts', side: 'head', startLine: 3, endLine: 4 }, text: 'nit' }));
    note(run(p, { type: 'setLineComment', anchor: { patchsetId: 'ps-a', path: 'src/a.ts', side: 'head', startLine: 3, endLine: 4 }, text: 'nit, reworded' }));
    note(run(p, { type: 'clearLineComment', key: 'ps-a|head|src/a.ts:3-4' }));
    note(run(p, { type: 'dismissFinding', generationId: 'g-one', boardId: 's-test/g-one/flagged', findingId: 'e7' }));
    note(run(p, { type: 'restoreFinding', generationId: 'g-one', boardId: 's-test/g-one/flagged', findingId: 'e7' }));
    note(run(p, { type: 'unstage', askId }));
    assert.deepEqual(pairs, [
      'stage->unstage',
      'edit->edit',
      'retire->restore',
      'restore->retire',
      'quoteOpen->quoteDiscard',
      'quoteReply->quoteRetract',
      'quoteClose->quoteOpen',
      'quoteOpen->quoteClose',
      'setVerdictOverride->setVerdictOverride',
      'setLineComment->clearLineComment',
      'setLineComment->setLineComment',
      'clearLineComment->setLineComment',
      'dismissFinding->restoreFinding',
      'restoreFinding->dismissFinding',
      'unstage->stage',
    ]);
    assert.deepEqual(reply.inverse, { type: 'quoteRetract', threadId, messageId: reply.event.type === 'quoteReply' ? reply.event.message.id : '' });
  });

  it('undo of an unstage puts the ask back in its staging position', () => {
    let p = EMPTY_ASK_PROJECTION;
    const ids: string[] = [];
    for (const text of ['first', 'second', 'third']) {
      const x = run(p, { type: 'stage', anchor: { kind: 'none' }, text, intent: 'comment', lane: 'post-review' });
      ids.push(x.event.type === 'stage' ? x.event.askId : '');
      p = x.p;
    }
    const unstaged = run(p, { type: 'unstage', askId: ids[1] ?? '' });
    const later = run(unstaged.p, { type: 'stage', anchor: { kind: 'none' }, text: 'fourth', intent: 'comment', lane: 'post-review' });
    const restored = stepAsks(later.p, unstaged.inverse);
    assert.ok(restored.ok);
    assert.deepEqual(
      restored.projection.asks.map((a) => a.text),
      ['first', 'second', 'third', 'fourth'],
    );
  });

  it('an edit back restores the old editedAt (null before the first edit)', () => {
    const staged = run(EMPTY_ASK_PROJECTION, { type: 'stage', anchor: { kind: 'none' }, text: 'body', intent: 'question', lane: 'post-review' });
    const askId = staged.event.type === 'stage' ? staged.event.askId : '';
    const edited = run(staged.p, { type: 'edit', askId, intent: 'comment' });
    assert.equal(edited.p.asks[0]?.text, 'body');
    assert.notEqual(edited.p.asks[0]?.editedAt, null);
    assert.deepEqual(edited.inverse, { type: 'edit', askId, text: 'body', intent: 'question', editedAt: null });
  });

  it('a thread with messages cannot be discarded, so undoing its opening waits for its replies to be undone', () => {
    const opened = run(EMPTY_ASK_PROJECTION, { type: 'quoteOpen', anchor: { kind: 'quote', generationId: 'g-one', lens: 'noise', elementId: 'e1', quote: 'q' } });
    const threadId = opened.event.type === 'quoteOpen' ? opened.event.threadId : '';
    const replied = run(opened.p, { type: 'quoteReply', threadId, author: 'agent', text: 'answer' });
    assert.equal(checkAskEvent(replied.p, opened.inverse)?.code, 'thread-not-empty');
    const retracted = stepAsks(replied.p, replied.inverse);
    assert.ok(retracted.ok);
    const discarded = stepAsks(retracted.projection, opened.inverse);
    assert.ok(discarded.ok);
    assert.deepStrictEqual(discarded.projection, EMPTY_ASK_PROJECTION);
  });

  it('records keyed by user text stay plain data (no prototype keys)', () => {
    const x = run(EMPTY_ASK_PROJECTION, { type: 'setLineComment', anchor: { patchsetId: 'ps-a', path: '__proto__', side: 'head', startLine: 1, endLine: 1 }, text: 'odd path' });
    assert.deepEqual(Object.keys(x.p.lineComments), ['ps-a|head|__proto__:1-1']);
    assert.equal(checkAskEvent(EMPTY_ASK_PROJECTION, { type: 'clearLineComment', key: '__proto__' })?.code, 'unknown-line-comment');
    assert.equal(checkAskEvent(EMPTY_ASK_PROJECTION, { type: 'restoreFinding', generationId: 'g', boardId: 's/g/flagged', findingId: 'constructor' })?.code, 'not-dismissed');
  });
});

describe('asks fold: quoteAnchor (host only) re-anchors or detaches a thread', () => {
  const AT = '2026-01-01T10:00:00.000Z';
  const before = { kind: 'quote', generationId: 'g-one', lens: 'design', elementId: 'e4', quote: 'the cache is global' } as const;
  const after = { kind: 'quote', generationId: 'g-two', lens: 'design', elementId: 'e9', quote: 'the cache is global' } as const;
  const base: AskEvent[] = [
    { type: 'quoteOpen', threadId: 'qt-1', anchor: before, openedAt: AT },
    { type: 'quoteReply', threadId: 'qt-1', message: { id: 'qm-1', author: 'reviewer', text: 'Why global?', at: AT } },
  ];
  const step = (p: AskProjection, event: AskEvent) => {
    const s = stepAsks(p, event);
    assert.ok(s.ok, s.ok ? '' : `${event.type}: ${s.refusal.code} ${s.refusal.message}`);
    return s;
  };

  it('a log without quoteAnchor folds every thread attached (detached: false)', () => {
    const p = foldAsks(base);
    assert.equal(p.quoteThreads['qt-1']?.detached, false);
    // A projection written before the field existed reads as attached.
    const legacy = JSON.parse(JSON.stringify(p)) as { quoteThreads: Record<string, Record<string, unknown>> };
    delete legacy.quoteThreads['qt-1']?.detached;
    const parsed = AskProjection.parse(legacy);
    assert.equal(parsed.quoteThreads['qt-1']?.detached, false);
  });

  it('moves a thread: new generation and element, messages and open state kept; the inverse moves it back exactly', () => {
    const p = foldAsks(base);
    const moved = step(p, { type: 'quoteAnchor', threadId: 'qt-1', anchor: after, detached: false });
    assert.deepEqual(moved.projection.quoteThreads['qt-1'], { anchor: after, messages: p.quoteThreads['qt-1']?.messages, open: true, openedAt: AT, detached: false });
    assert.deepEqual(moved.inverse, { type: 'quoteAnchor', threadId: 'qt-1', anchor: before, detached: false });
    const back = step(moved.projection, moved.inverse);
    assert.deepStrictEqual(back.projection, p);
    assert.deepEqual(back.inverse, { type: 'quoteAnchor', threadId: 'qt-1', anchor: after, detached: false });
  });

  it('detaches a thread (anchor kept); the inverse re-attaches it; setting what is already so is refused', () => {
    const p = foldAsks(base);
    const detach: AskEvent = { type: 'quoteAnchor', threadId: 'qt-1', anchor: before, detached: true };
    const detached = step(p, detach);
    assert.equal(detached.projection.quoteThreads['qt-1']?.detached, true);
    assert.deepEqual(detached.projection.quoteThreads['qt-1']?.anchor, before);
    assert.deepEqual(detached.inverse, { type: 'quoteAnchor', threadId: 'qt-1', anchor: before, detached: false });
    assert.deepStrictEqual(step(detached.projection, detached.inverse).projection, p);
    assert.equal(checkAskEvent(detached.projection, detach)?.code, 'no-change');
    assert.equal(checkAskEvent(p, { type: 'quoteAnchor', threadId: 'qt-1', anchor: before, detached: false })?.code, 'no-change');
    assert.equal(checkAskEvent(p, { ...detach, threadId: 'qt-nope' })?.code, 'unknown-thread');
    // The log schema holds it; the command schema does not (no client sends it).
    assert.ok(AskEvent.safeParse(detach).success);
    assert.equal(parseAskCommand(detach).ok, false);
    assert.ok(ASK_EVENT_TYPES.includes('quoteAnchor'));
  });

  it('a detached thread still takes replies, closes and reopens, and stays detached throughout', () => {
    let p = foldAsks([...base, { type: 'quoteAnchor', threadId: 'qt-1', anchor: before, detached: true }]);
    const ctx = testContext();
    for (const command of [
      { type: 'quoteReply', threadId: 'qt-1', author: 'agent', text: 'It is shared by design.' },
      { type: 'quoteClose', threadId: 'qt-1' },
      { type: 'quoteOpen', threadId: 'qt-1' },
      { type: 'quoteClose', threadId: 'qt-1' },
    ] as const satisfies readonly AskCommand[]) {
      const minted = mint(p, command, ctx, 10);
      assert.ok(minted.ok, minted.ok ? '' : minted.refusal.message);
      const s = step(p, minted.event);
      // Every one of them is undone exactly, detached flag included.
      assert.deepStrictEqual(step(s.projection, s.inverse).projection, p);
      p = s.projection;
      assert.equal(p.quoteThreads['qt-1']?.detached, true, `${command.type} keeps the thread detached`);
    }
    const thread = p.quoteThreads['qt-1'];
    assert.equal(thread?.open, false);
    assert.deepEqual(
      thread?.messages.map((m) => m.text),
      ['Why global?', 'It is shared by design.'],
    );
  });

  it('an empty detached thread cannot be discarded (its re-creation could not say it was detached)', () => {
    const opened: AskEvent = { type: 'quoteOpen', threadId: 'qt-2', anchor: before, openedAt: AT };
    const p = foldAsks([opened]);
    const undoOpen = inverseOf(EMPTY_ASK_PROJECTION, opened);
    assert.deepEqual(undoOpen, { type: 'quoteDiscard', threadId: 'qt-2' });
    const detached = step(p, { type: 'quoteAnchor', threadId: 'qt-2', anchor: before, detached: true }).projection;
    assert.equal(checkAskEvent(detached, undoOpen)?.code, 'thread-detached');
    // Moved but attached, it can: the re-creation restores the moved anchor exactly.
    const moved = step(p, { type: 'quoteAnchor', threadId: 'qt-2', anchor: after, detached: false }).projection;
    const discarded = step(moved, undoOpen);
    assert.deepStrictEqual(step(discarded.projection, discarded.inverse).projection, moved);
  });
});

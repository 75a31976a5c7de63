/**
 * The board's ask affordances rendered by the real App into happy-dom, behind a fake bridge that
 * records what the panel posts. Every posted act is checked against protocol's AskCommand, then
 * answered the way the host answers it: minted, checked and folded by host/asks (commands.ts and
 * fold.ts), so the projection the panel redraws from is a real one.
 */
import * as assert from 'node:assert/strict';
import { act } from 'preact/test-utils';
import { mintAskEvent } from '../../../host/asks/commands';
import { applyAskEvent, checkAskEvent, EMPTY_ASK_PROJECTION } from '../../../host/asks/fold';
import { AskCommand, flaggedBoardId, type AskEvent, type AskProjection, type FromWebview, type QuoteAnchor, type SessionSnapshot, type ToWebview } from '../../../protocol';
import { FROZEN_REASON } from '../../../webview/board/askContext';
import { DETACHED_REASON } from '../../../webview/board/asks';
import { generation, lane, PATCHSET } from './boardFixtures';
import { snapshot } from './fixtures';
import { all, byTestId, click, FakeBridge, happyDomPerTest, mountApp, one, text } from './happyDom';

const SESSION = 'ses-1';
const GEN = 'g-0011223344556677';
const BOARD = flaggedBoardId(SESSION, GEN);
const AT = '2026-01-01T10:00:00.000Z';

/** The host's side of the ask log: the real mint, check and fold over one session's projection. */
class AskHost {
  projection: AskProjection = EMPTY_ASK_PROJECTION;
  private seq = 0;
  private ids = 0;
  /** Append an event the way the log does (for state the panel did not make: an Explain's messages). */
  apply(event: AskEvent): void {
    const refusal = checkAskEvent(this.projection, event);
    assert.equal(refusal, null, refusal?.message);
    this.seq++;
    this.projection = applyAskEvent(this.projection, event);
  }
  /** Answer one command: the new projection (ToWebview asks) or the refusal (askRefused). */
  answer(command: AskCommand): ToWebview {
    const minted = mintAskEvent(this.projection, command, { sessionId: SESSION, now: AT, ordinal: this.seq + 1, newId: (prefix) => `${prefix}-host${++this.ids}` });
    if (!minted.ok) return { type: 'rennet/panel/askRefused', message: minted.refusal.message };
    const refusal = checkAskEvent(this.projection, minted.event);
    if (refusal) return { type: 'rennet/panel/askRefused', message: refusal.message };
    this.apply(minted.event);
    return { type: 'rennet/panel/asks', projection: this.projection, undo: { label: command.type } };
  }
}

describe('webview/board: asks on the board (happy-dom, App + fake bridge + the host’s fold)', () => {
  const { dom, reinstall } = happyDomPerTest();
  let bridge: FakeBridge;
  let host: AskHost;

  const send = (message: ToWebview) => bridge.send(message);
  const pushAsks = (undo: { label: string } | null = null) => send({ type: 'rennet/panel/asks', projection: host.projection, undo });
  const mount = async (session: SessionSnapshot = snapshot(), g = generation()) => {
    await mountApp(dom.root, bridge);
    await send({ type: 'rennet/panel/snapshot', snapshot: session });
    await send({ type: 'rennet/panel/generation', snapshot: g });
    await pushAsks();
  };
  /** The last message posted, which must be an askCommand the contract accepts. */
  const lastCommand = (): AskCommand => {
    const message = bridge.posted.at(-1);
    assert.equal(message?.type, 'rennet/panel/askCommand');
    return AskCommand.parse((message as { command: unknown }).command);
  };
  /** Hand the last posted command to the host and push its answer to the panel. */
  const hostAnswers = async () => send(host.answer(lastCommand()));
  const el = (id: string) => one(dom.root, `[data-testid="element"][data-id="${id}"]`);
  const area = (id: string) => one(dom.root, `[data-testid="ask-area"][data-for="${id}"]`);
  const tab = (lens: string) => one(dom.root, `[data-testid="lens-tab"][data-lens="${lens}"]`);
  const expand = async (sectionId: string) => {
    const toggle = one(el(sectionId), byTestId('fold-toggle'));
    if (toggle.getAttribute('aria-expanded') === 'false') await click(toggle);
  };
  const button = (root: ParentNode, testId: string) => one(root, byTestId(testId)) as HTMLButtonElement;
  const settle = () => act(async () => new Promise<void>((resolve) => setTimeout(resolve, 10)));
  /** Select `needle` inside `root` with the DOM's Selection API, then let selectionchange run. */
  const select = async (root: HTMLElement, needle: string) => {
    const doc = dom.document;
    const walker = doc.createTreeWalker(root, 4 /* NodeFilter.SHOW_TEXT */);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const at = (node.textContent ?? '').indexOf(needle);
      if (at < 0) continue;
      const range = doc.createRange();
      range.setStart(node, at);
      range.setEnd(node, at + needle.length);
      const selection = doc.getSelection();
      assert.ok(selection);
      selection.removeAllRanges();
      selection.addRange(range);
      await settle();
      return;
    }
    assert.fail(`no text node holds “${needle}”`);
  };
  const typeInto = async (field: HTMLElement, value: string) => {
    await act(() => {
      (field as HTMLTextAreaElement).value = value;
      const EventCtor = (dom.window as unknown as { Event: typeof Event }).Event;
      field.dispatchEvent(new EventCtor('input', { bubbles: true }));
    });
  };
  const keydown = async (target: EventTarget, key: string, init: KeyboardEventInit = {}) => {
    await act(() => {
      const KeyboardEventCtor = (dom.window as unknown as { KeyboardEvent: typeof KeyboardEvent }).KeyboardEvent;
      target.dispatchEvent(new KeyboardEventCtor('keydown', { key, bubbles: true, cancelable: true, ...init }));
    });
  };

  beforeEach(() => {
    bridge = new FakeBridge();
    host = new AskHost();
  });

  describe('finding actions', () => {
    it('Request change stages a request-change ask on the finding and its first code span, lane changes for one’s own branch (a round’s work)', async () => {
      await mount();
      await expand('f1');
      await click(button(el('f4'), 'finding-request'));
      assert.deepEqual(lastCommand(), {
        type: 'stage',
        anchor: {
          kind: 'finding',
          generationId: GEN,
          boardId: BOARD,
          findingId: 'f4',
          codeRef: { patchsetId: PATCHSET, path: 'src/retry.ts', side: 'head', startLine: 6, endLine: 8 },
        },
        text: 'The last attempt still sleeps before giving up\n\nSkip the wait when the attempt is the last one.',
        intent: 'request-change',
        lane: 'changes',
      });
      await hostAnswers();
      const state = one(el('f4'), byTestId('finding-state'));
      assert.equal(state.getAttribute('data-state'), 'requested');
      assert.equal(text(state), 'Change requested');
      const again = button(el('f4'), 'finding-request');
      assert.equal(again.disabled, true, 'a second request would stage a duplicate');
      assert.match(again.title, /already staged/);
      assert.equal(all(el('f5'), byTestId('finding-state')).length, 0, 'the other finding is unmarked');
      assert.equal(text(one(tab('flagged'), byTestId('open-count'))), '2 open', 'a requested finding is decided: off the open count');
    });

    it('sends a working-tree review’s change request to the changes lane', async () => {
      const working = snapshot();
      working.session.target = { kind: 'working-tree', base: 'main' };
      await mount(working);
      await expand('f6');
      await click(button(el('f8'), 'finding-request'));
      const command = lastCommand();
      assert.equal(command.type === 'stage' && command.lane, 'changes');
      assert.equal(command.type === 'stage' && command.anchor.kind === 'finding' && command.anchor.findingId, 'f8');
    });

    it('Dismiss mutes the finding, takes it off the open count, and Restore puts it back', async () => {
      await mount();
      assert.equal(text(one(tab('flagged'), byTestId('open-count'))), '3 open');
      assert.equal(text(one(dom.root, byTestId('board-open-count'))), '3 open');
      await expand('f1');
      await click(button(el('f5'), 'finding-dismiss'));
      assert.deepEqual(lastCommand(), { type: 'dismissFinding', generationId: GEN, boardId: BOARD, findingId: 'f5' });
      await hostAnswers();
      assert.equal(el('f5').getAttribute('data-dismissed'), 'true');
      assert.ok(el('f5').classList.contains('rn-finding-dismissed'));
      assert.equal(text(one(el('f5'), byTestId('finding-state'))), 'Dismissed');
      assert.equal(all(el('f5'), byTestId('finding-dismiss')).length, 0);
      const request = button(el('f5'), 'finding-request');
      assert.equal(request.disabled, true, 'a dismissed finding takes no change request until restored (as in the editor thread)');
      assert.match(request.title, /restore it/);
      assert.equal(text(one(tab('flagged'), byTestId('open-count'))), '2 open');
      assert.equal(one(dom.root, byTestId('board-open-count')).getAttribute('data-count'), '2');

      await click(button(el('f5'), 'finding-restore'));
      assert.deepEqual(lastCommand(), { type: 'restoreFinding', generationId: GEN, boardId: BOARD, findingId: 'f5' });
      await hostAnswers();
      assert.equal(el('f5').getAttribute('data-dismissed'), null);
      assert.equal(all(el('f5'), byTestId('finding-state')).length, 0);
      assert.equal(text(one(tab('flagged'), byTestId('open-count'))), '3 open');
    });

    it('Discuss asks the agent about the finding in a thread anchored to its title, and shows progress there', async () => {
      await mount();
      await expand('f1');
      await click(button(el('f4'), 'finding-discuss'));
      const message = bridge.posted.at(-1);
      assert.equal(message?.type, 'rennet/panel/explain');
      const explain = message as Extract<FromWebview, { type: 'rennet/panel/explain' }>;
      assert.deepEqual(explain.anchor, { kind: 'quote', generationId: GEN, lens: 'flagged', elementId: 'f4', quote: 'The last attempt still sleeps before giving up' });
      assert.match(explain.requestId, /^.{1,64}$/);
      const status = one(area('f4'), byTestId('explain-status'));
      assert.equal(status.getAttribute('data-state'), 'working');
      assert.equal(status.getAttribute('role'), 'status');
      const busy = button(el('f4'), 'finding-discuss');
      assert.equal(busy.disabled, true, 'one question at a time under a finding');
      assert.match(busy.title, /still answering/);
      await send({ type: 'rennet/panel/explainStatus', requestId: explain.requestId, state: 'failed', threadId: null, message: 'No harness is configured.' });
      assert.equal(button(el('f4'), 'finding-discuss').disabled, false);
    });

    it('disables every action on a frozen generation, saying why, and sends nothing', async () => {
      await mount(snapshot(), generation({ generationId: 'g-old', status: 'frozen' }));
      await expand('f1');
      const before = bridge.posted.length;
      for (const id of ['finding-request', 'finding-dismiss', 'finding-discuss']) {
        const b = button(el('f4'), id);
        assert.equal(b.disabled, true, id);
        assert.equal(b.title, FROZEN_REASON, id);
        await click(b);
      }
      assert.equal(bridge.posted.length, before);
    });

    it('waits for the ask log before offering acts (no projection: disabled, with the reason)', async () => {
      await mountApp(dom.root, bridge);
      await send({ type: 'rennet/panel/snapshot', snapshot: snapshot() });
      await send({ type: 'rennet/panel/generation', snapshot: generation() });
      await expand('f1');
      const dismiss = button(el('f4'), 'finding-dismiss');
      assert.equal(dismiss.disabled, true);
      assert.match(dismiss.title, /not been read yet/);
      assert.equal(all(dom.root, byTestId('open-count')).length, 0, 'no count before the log is read');
      assert.equal(all(dom.root, byTestId('asks-strip')).length, 0);
    });

    it('renders dismissed and requested states straight from a projection', async () => {
      host.apply({ type: 'dismissFinding', generationId: GEN, boardId: BOARD, findingId: 'f8' });
      host.apply({
        type: 'stage',
        askId: 'ask-9',
        anchor: { kind: 'finding', generationId: GEN, boardId: BOARD, findingId: 'f8' },
        text: 'Read it once',
        intent: 'request-change',
        lane: 'post-review',
        createdAt: AT,
        editedAt: null,
        ordinal: 2,
      });
      await mount();
      await expand('f6');
      assert.deepEqual(
        all(el('f8'), byTestId('finding-state')).map((s) => s.getAttribute('data-state')),
        ['requested', 'dismissed'],
      );
      assert.equal(text(one(tab('flagged'), byTestId('open-count'))), '2 open');
    });
  });

  describe('the staged-asks strip and refusals', () => {
    it('shows the staged count and an Undo labelled with the last act', async () => {
      await mount();
      assert.equal(text(one(dom.root, byTestId('asks-count'))), 'No asks staged');
      const undo = button(dom.root, 'undo-ask');
      assert.equal(undo.disabled, true);
      await expand('f1');
      await click(button(el('f4'), 'finding-request'));
      await send(host.answer(lastCommand()));
      await send({ type: 'rennet/panel/asks', projection: host.projection, undo: { label: 'stage change request on a finding' } });
      assert.equal(one(dom.root, byTestId('asks-count')).getAttribute('data-count'), '1');
      assert.equal(text(one(dom.root, byTestId('asks-count'))), '1 ask staged');
      const live = button(dom.root, 'undo-ask');
      assert.equal(live.disabled, false);
      assert.equal(text(live), 'Undo stage change request on a finding');
      await click(live);
      assert.deepEqual(bridge.posted.at(-1), { type: 'rennet/panel/undo' });
    });

    it('says a refused act inline, as an alert the reviewer dismisses', async () => {
      await mount();
      await send({ type: 'rennet/panel/askRefused', message: 'Undo: the act was already undone' });
      const notice = one(dom.root, byTestId('ask-refused'));
      assert.equal(notice.getAttribute('role'), 'alert');
      assert.match(text(notice), /already undone/);
      await click(one(notice, byTestId('dismiss-notice')));
      assert.equal(all(dom.root, byTestId('ask-refused')).length, 0);
    });

    it('a host refusal of a real act arrives the same way (dismissing twice)', async () => {
      await mount();
      await expand('f1');
      await click(button(el('f4'), 'finding-dismiss'));
      const command = lastCommand();
      await send(host.answer(command));
      await send(host.answer(command));
      assert.match(text(one(dom.root, byTestId('ask-refused'))), /dismiss/i);
    });
  });

  describe('the selection toolbar on board prose', () => {
    const showSequence = async () => {
      await mount();
      await click(tab('sequence'));
    };

    it('appears under the element holding the selection, and Comment stages a comment on the quote', async () => {
      await showSequence();
      assert.equal(all(dom.root, byTestId('selection-toolbar')).length, 0);
      await select(el('s7'), 'Both files are new');
      const toolbar = one(area('s7'), byTestId('selection-toolbar'));
      assert.equal(toolbar.getAttribute('role'), 'toolbar');
      await click(button(toolbar, 'selection-comment'));
      assert.equal(all(dom.root, byTestId('selection-toolbar')).length, 0, 'the composer replaces the toolbar');
      const composer = one(area('s7'), byTestId('ask-composer'));
      assert.equal(composer.getAttribute('data-intent'), 'comment');
      const stage = button(composer, 'ask-composer-stage');
      assert.equal(stage.disabled, true, 'nothing typed yet');
      await typeInto(one(composer, byTestId('ask-composer-text')), 'Say which files.');
      await click(button(composer, 'ask-composer-stage'));
      assert.deepEqual(lastCommand(), {
        type: 'stage',
        anchor: { kind: 'quote', generationId: GEN, lens: 'sequence', elementId: 's7', quote: 'Both files are new' },
        text: 'Say which files.',
        intent: 'comment',
        lane: 'changes',
      });
      assert.equal(text(button(dom.root, 'ask-composer-stage')), 'Staging…');
      await hostAnswers();
      assert.equal(all(dom.root, byTestId('ask-composer')).length, 0, 'the composer closes once the ask is staged');
      assert.equal(one(dom.root, byTestId('asks-count')).getAttribute('data-count'), '1');
    });

    it('Request changes stages a request-change; a refusal keeps the composer and its text', async () => {
      await showSequence();
      await expand('s1');
      await select(el('s5'), 'A thrown error is kept');
      await click(button(area('s5'), 'selection-request'));
      const composer = one(area('s5'), byTestId('ask-composer'));
      assert.equal(composer.getAttribute('data-intent'), 'request-change');
      await typeInto(one(composer, byTestId('ask-composer-text')), 'Keep the last error only.');
      await click(button(composer, 'ask-composer-stage'));
      const command = lastCommand();
      assert.equal(command.type, 'stage');
      assert.equal(command.type === 'stage' && command.intent, 'request-change');
      assert.deepEqual(command.type === 'stage' && command.anchor, { kind: 'quote', generationId: GEN, lens: 'sequence', elementId: 's5', quote: 'A thrown error is kept' });
      await send({ type: 'rennet/panel/askRefused', message: 'a session holds at most 5000 asks' });
      const still = one(area('s5'), byTestId('ask-composer'));
      assert.equal((one(still, byTestId('ask-composer-text')) as HTMLTextAreaElement).value, 'Keep the last error only.');
      assert.equal(button(still, 'ask-composer-stage').disabled, false, 'the reviewer can try again');
    });

    it('Explain sends the quote with a fresh requestId and shows the status; a failure says the host’s reason, never an answer', async () => {
      await showSequence();
      await select(el('s7'), 'Both files are new');
      await click(button(area('s7'), 'selection-explain'));
      const first = bridge.posted.at(-1) as Extract<FromWebview, { type: 'rennet/panel/explain' }>;
      assert.equal(first.type, 'rennet/panel/explain');
      assert.deepEqual(first.anchor, { kind: 'quote', generationId: GEN, lens: 'sequence', elementId: 's7', quote: 'Both files are new' });
      assert.equal(one(area('s7'), byTestId('explain-status')).getAttribute('data-state'), 'working');

      // The host opened a thread holding the question, and found no harness.
      const anchor: QuoteAnchor = first.anchor;
      host.apply({ type: 'quoteOpen', threadId: 'qt-1', anchor, openedAt: AT });
      host.apply({ type: 'quoteReply', threadId: 'qt-1', message: { id: 'qm-1', author: 'reviewer', text: 'Explain this passage.', at: AT } });
      await pushAsks();
      const failure = 'No harness is configured for the sequence lens: set rennet.harness in the settings.';
      await send({ type: 'rennet/panel/explainStatus', requestId: first.requestId, state: 'failed', threadId: 'qt-1', message: failure });
      const status = one(area('s7'), byTestId('explain-status'));
      assert.equal(status.getAttribute('data-state'), 'failed');
      assert.equal(status.getAttribute('role'), 'alert');
      assert.equal(text(one(status, byTestId('explain-failure'))), failure);
      assert.deepEqual(
        all(area('s7'), byTestId('quote-message')).map((m) => m.getAttribute('data-author')),
        ['reviewer'],
        'no agent answer is made up',
      );

      // Asked again, with a new requestId; this time the agent answers in the thread.
      await select(el('s7'), 'Both files are new');
      await click(button(area('s7'), 'selection-explain'));
      const second = bridge.posted.at(-1) as Extract<FromWebview, { type: 'rennet/panel/explain' }>;
      assert.notEqual(second.requestId, first.requestId);
      assert.equal(first.threadId, undefined, 'the first Explain lets the host open the thread');
      assert.equal(second.threadId, 'qt-1', 'asking again about the same span continues its open thread');
      host.apply({ type: 'quoteReply', threadId: 'qt-1', message: { id: 'qm-2', author: 'agent', text: 'Both are **added** by this change.', at: AT } });
      await pushAsks();
      await send({ type: 'rennet/panel/explainStatus', requestId: second.requestId, state: 'answered', threadId: 'qt-1', message: null });
      assert.equal(one(area('s7'), byTestId('explain-status')).getAttribute('data-state'), 'answered');
      const agent = one(area('s7'), '[data-testid="quote-message"][data-author="agent"]');
      assert.match(text(agent), /^Agent/);
      assert.equal(text(one(agent, 'strong')), 'added', 'the agent’s Markdown is rendered');
    });

    it('is keyboard reachable: Tab moves into it, arrows move along it, Escape closes it', async () => {
      await showSequence();
      await select(el('s7'), 'Both files are new');
      await keydown(dom.document, 'Tab');
      assert.equal((dom.document.activeElement as HTMLElement | null)?.getAttribute('data-testid'), 'selection-comment');
      await keydown(dom.document.activeElement as HTMLElement, 'ArrowRight');
      assert.equal((dom.document.activeElement as HTMLElement | null)?.getAttribute('data-testid'), 'selection-request');
      await keydown(dom.document.activeElement as HTMLElement, 'Escape');
      await settle();
      assert.equal(all(dom.root, byTestId('selection-toolbar')).length, 0);
      assert.equal((dom.document.activeElement as HTMLElement | null)?.getAttribute('data-id'), 's7', 'focus returns to the element');
    });

    it('quotes the nearest element, and nothing for a selection in the panel’s own thread text', async () => {
      host.apply({ type: 'quoteOpen', threadId: 'qt-1', anchor: { kind: 'quote', generationId: GEN, lens: 'sequence', elementId: 's3', quote: 'The body is read once' }, openedAt: AT });
      await showSequence();
      await pushAsks();
      await expand('s1');
      await select(el('s6'), 'Is the delay capped?');
      assert.ok(one(area('s6'), byTestId('selection-toolbar')), 'the callout nested in the step is the nearest element');
      await select(one(area('s3'), byTestId('quote-thread-quote')), 'The body is read once');
      assert.equal(all(dom.root, byTestId('selection-toolbar')).length, 0);
    });

    it('is disabled on a frozen generation, with the reason', async () => {
      await mount(snapshot(), generation({ generationId: 'g-old', status: 'frozen' }));
      await click(tab('sequence'));
      await select(el('s7'), 'Both files are new');
      for (const id of ['selection-comment', 'selection-request', 'selection-explain']) {
        const b = button(area('s7'), id);
        assert.equal(b.disabled, true, id);
        assert.equal(b.title, FROZEN_REASON);
      }
    });
  });

  describe('quote threads', () => {
    const anchor: QuoteAnchor = { kind: 'quote', generationId: GEN, lens: 'sequence', elementId: 's7', quote: 'Both files are new' };

    it('render under their element with the quote and the messages, and Reply, Close and Reopen send the acts', async () => {
      host.apply({ type: 'quoteOpen', threadId: 'qt-1', anchor, openedAt: AT });
      host.apply({ type: 'quoteReply', threadId: 'qt-1', message: { id: 'qm-1', author: 'reviewer', text: 'Why two files?', at: AT } });
      await mount();
      await click(tab('sequence'));
      const thread = one(area('s7'), byTestId('quote-thread'));
      assert.equal(thread.getAttribute('data-state'), 'open');
      assert.equal(text(one(thread, 'blockquote')), 'Both files are new');
      assert.deepEqual(all(thread, byTestId('quote-message')).map(text), ['You Why two files?']);

      await click(button(thread, 'quote-reply'));
      await typeInto(one(dom.root, byTestId('quote-reply-text')), 'Never mind.');
      await click(button(dom.root, 'quote-reply-send'));
      assert.deepEqual(lastCommand(), { type: 'quoteReply', threadId: 'qt-1', author: 'reviewer', text: 'Never mind.' });
      await hostAnswers();
      assert.equal(all(dom.root, byTestId('quote-reply-text')).length, 0, 'the reply box closes once the reply landed');
      assert.equal(all(area('s7'), byTestId('quote-message')).length, 2);

      await click(button(area('s7'), 'quote-close'));
      assert.deepEqual(lastCommand(), { type: 'quoteClose', threadId: 'qt-1' });
      await hostAnswers();
      assert.equal(one(area('s7'), byTestId('quote-thread')).getAttribute('data-state'), 'closed');
      assert.equal(all(area('s7'), byTestId('quote-reply')).length, 0);
      await click(button(area('s7'), 'quote-reopen'));
      assert.deepEqual(lastCommand(), { type: 'quoteOpen', threadId: 'qt-1' });
    });

    it('keep hostile quote and message text as text (scripts enabled)', async () => {
      await reinstall({ scripts: true });
      const hostile = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';
      host.apply({ type: 'quoteOpen', threadId: 'qt-1', anchor: { ...anchor, quote: hostile }, openedAt: AT });
      host.apply({ type: 'quoteReply', threadId: 'qt-1', message: { id: 'qm-1', author: 'reviewer', text: hostile, at: AT } });
      host.apply({ type: 'quoteReply', threadId: 'qt-1', message: { id: 'qm-2', author: 'agent', text: `${hostile} [x](javascript:alert(1))`, at: AT } });
      await mount();
      await click(tab('sequence'));
      const thread = one(area('s7'), byTestId('quote-thread'));
      assert.equal(text(one(thread, 'blockquote')), hostile);
      assert.deepEqual(
        all(thread, 'img, script, iframe, style').map((e) => e.tagName),
        [],
      );
      for (const node of all(thread, '*')) for (const name of node.getAttributeNames()) assert.ok(!/^on/i.test(name), `${node.tagName} carries ${name}`);
      assert.ok(all(thread, 'a').every((a) => !/^javascript:/i.test(a.getAttribute('href') ?? '')));
      assert.equal((dom.window as unknown as { __pwned?: number }).__pwned, undefined);
    });

    it('lists a thread whose element is not on the board rather than losing it', async () => {
      host.apply({ type: 'quoteOpen', threadId: 'qt-9', anchor: { ...anchor, elementId: 'gone' }, openedAt: AT });
      await mount();
      await click(tab('sequence'));
      assert.equal(one(one(dom.root, byTestId('unplaced-threads')), byTestId('quote-thread')).getAttribute('data-thread-id'), 'qt-9');
    });
  });

  describe('detached threads', () => {
    const OLD = 'g-old';
    const s7: QuoteAnchor = { kind: 'quote', generationId: GEN, lens: 'sequence', elementId: 's7', quote: 'Both files are new' };
    const setUp = () => {
      // qt-1 is detached (its quote was not found once on a later board); qt-2 on the same element is not.
      host.apply({ type: 'quoteOpen', threadId: 'qt-1', anchor: s7, openedAt: AT });
      host.apply({ type: 'quoteReply', threadId: 'qt-1', message: { id: 'qm-1', author: 'reviewer', text: 'Why two files?', at: AT } });
      host.apply({ type: 'quoteOpen', threadId: 'qt-2', anchor: { ...s7, quote: 'see src/retry.ts:1-20' }, openedAt: AT });
      host.apply({ type: 'quoteAnchor', threadId: 'qt-1', anchor: s7, detached: true });
    };
    const threadIds = (root: ParentNode) => all(root, byTestId('quote-thread')).map((t) => t.getAttribute('data-thread-id'));

    it('are listed under Detached with their quote, messages and why, and draw nothing on the passage they were quoted from', async () => {
      setUp();
      await mount();
      await click(tab('sequence'));
      // The stale spot: only the attached thread is under s7; the detached one is neither there nor "unplaced".
      assert.deepEqual(threadIds(area('s7')), ['qt-2']);
      assert.equal(all(dom.root, byTestId('unplaced-threads')).length, 0);

      const list = one(dom.root, byTestId('detached-threads'));
      assert.equal(list.getAttribute('data-lens'), 'sequence');
      assert.equal(text(one(list, byTestId('detached-why'))), DETACHED_REASON);
      assert.match(DETACHED_REASON, /no longer appears exactly once/);
      assert.deepEqual(threadIds(list), ['qt-1']);
      const thread = one(list, byTestId('quote-thread'));
      assert.equal(thread.getAttribute('data-detached'), 'true');
      assert.equal(text(one(thread, byTestId('quote-thread-quote'))), 'Both files are new');
      assert.deepEqual(all(thread, byTestId('quote-message')).map(text), ['You Why two files?']);
      const chip = one(thread, byTestId('quote-thread-detached'));
      assert.equal(text(chip), 'Detached');
      assert.equal(chip.getAttribute('title'), DETACHED_REASON);
      assert.match(text(one(thread, byTestId('quote-thread-origin'))), /g-001122334455/);
      assert.equal(one(area('s7'), byTestId('quote-thread')).getAttribute('data-detached'), 'false');

      // Another lens lists none of them.
      await click(tab('flagged'));
      assert.equal(all(dom.root, byTestId('detached-threads')).length, 0);
    });

    it('still take replies and close, staying detached', async () => {
      setUp();
      await mount();
      await click(tab('sequence'));
      const list = () => one(dom.root, byTestId('detached-threads'));
      await click(button(list(), 'quote-reply'));
      await typeInto(one(list(), byTestId('quote-reply-text')), 'Still relevant?');
      await click(button(list(), 'quote-reply-send'));
      assert.deepEqual(lastCommand(), { type: 'quoteReply', threadId: 'qt-1', author: 'reviewer', text: 'Still relevant?' });
      await hostAnswers();
      assert.deepEqual(all(list(), byTestId('quote-message')).map(text), ['You Why two files?', 'You Still relevant?']);
      await click(button(list(), 'quote-close'));
      assert.deepEqual(lastCommand(), { type: 'quoteClose', threadId: 'qt-1' });
      await hostAnswers();
      const closed = one(list(), byTestId('quote-thread'));
      assert.equal(closed.getAttribute('data-state'), 'closed');
      assert.equal(closed.getAttribute('data-detached'), 'true');
      assert.deepEqual(threadIds(area('s7')), ['qt-2'], 'closing it does not put it back on the passage');
    });

    it('a thread re-anchored by a round moves onto its new element, out of the Detached list', async () => {
      setUp();
      await mount();
      await click(tab('sequence'));
      host.apply({ type: 'quoteAnchor', threadId: 'qt-1', anchor: { ...s7, elementId: 's5' }, detached: false });
      await pushAsks();
      await expand('s1');
      assert.deepEqual(threadIds(area('s5')), ['qt-1']);
      assert.deepEqual(threadIds(area('s7')), ['qt-2']);
      assert.equal(all(dom.root, byTestId('detached-threads')).length, 0);
    });

    it('are listed even when the new generation has no board of their lens', async () => {
      host.apply({ type: 'quoteOpen', threadId: 'qt-3', anchor: { ...s7, generationId: OLD }, openedAt: AT });
      host.apply({ type: 'quoteAnchor', threadId: 'qt-3', anchor: { ...s7, generationId: OLD }, detached: true });
      const lanes = generation().lanes.map((l) => (l.lens === 'sequence' ? lane('sequence', 'absent', { absence: 'spec-only' }) : l));
      await mount(snapshot(), generation({ lanes, frozen: [{ generationId: OLD, patchsetId: PATCHSET, createdAt: AT }] }));
      await click(tab('sequence'));
      assert.ok(one(dom.root, byTestId('lane-absent')));
      assert.deepEqual(threadIds(one(dom.root, byTestId('detached-threads'))), ['qt-3']);
    });

    it('Explain on the passage a detached thread quoted opens a fresh thread rather than continuing it', async () => {
      setUp();
      await mount();
      await click(tab('sequence'));
      await select(el('s7'), 'Both files are new');
      await click(button(area('s7'), 'selection-explain'));
      const asked = bridge.posted.at(-1) as Extract<FromWebview, { type: 'rennet/panel/explain' }>;
      assert.equal(asked.type, 'rennet/panel/explain');
      assert.deepEqual(asked.anchor, s7);
      assert.equal(asked.threadId, undefined);
    });
  });

  describe('reveal', () => {
    it('selects the lens, opens the folded section, scrolls to and focuses the element, and flashes it', async () => {
      await mount();
      await click(tab('decisions'));
      await send({ type: 'rennet/panel/reveal', generationId: GEN, lens: 'flagged', elementId: 'f8' });
      await settle();
      assert.equal(tab('flagged').getAttribute('aria-selected'), 'true');
      assert.equal(el('f6').getAttribute('data-expanded'), 'true');
      const active = dom.document.activeElement as HTMLElement | null;
      assert.equal(active?.getAttribute('data-testid'), 'element');
      assert.equal(active?.getAttribute('data-id'), 'f8');
      assert.ok(active?.classList.contains('rn-revealed'));
    });

    it('waits until its generation is the one shown', async () => {
      await mount(snapshot(), generation({ generationId: 'g-old', status: 'frozen' }));
      await send({ type: 'rennet/panel/reveal', generationId: GEN, lens: 'sequence', elementId: 's5' });
      await settle();
      assert.notEqual((dom.document.activeElement as HTMLElement | null)?.getAttribute('data-id'), 's5');
      await send({ type: 'rennet/panel/generation', snapshot: generation() });
      await settle();
      assert.equal((dom.document.activeElement as HTMLElement | null)?.getAttribute('data-id'), 's5');
    });

    it('says so when the element is not on the board', async () => {
      await mount();
      await send({ type: 'rennet/panel/reveal', generationId: GEN, lens: 'flagged', elementId: 'f404' });
      await settle();
      const notice = one(dom.root, byTestId('reveal-missing'));
      assert.equal(notice.getAttribute('role'), 'alert');
      assert.match(text(notice), /f404/);
    });
  });
});

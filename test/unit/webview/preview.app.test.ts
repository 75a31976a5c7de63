/**
 * The review preview rendered into happy-dom with a fake bridge: the ready handshake, the verdict
 * and its override control, the body rendered and raw, the comments and folded asks, the one Post
 * button and what replaces it (posting, posted, refused, cannot compose), and hostile ask text
 * rendered with script evaluation ON.
 */
import * as assert from 'node:assert/strict';
import { h, render } from 'preact';
import { act } from 'preact/test-utils';
import { ToPreview as ToPreviewSchema, type FromPreview, type PreviewSnapshot, type PreviewState, type ReviewPreview, type ToPreview } from '../../../protocol';
import type { PreviewBridge } from '../../../webview/bridge';
import { parseToPreview } from '../../../webview/bridge';
import { PreviewApp, initialPreviewModel, reducePreview } from '../../../webview/preview/PreviewApp';
import { all, byTestId, click, happyDomPerTest, one, text, type HappyDom } from './happyDom';
import { CANARY } from './hostileFixtures';
import { Asks } from '../exits/fixtures';
import { hostileAsks, previewSnapshot, previewWorld, type PreviewWorld } from './previewFixtures';

class FakePreviewBridge implements PreviewBridge {
  readonly posted: FromPreview[] = [];
  state: PreviewState | undefined;
  private readonly listeners = new Set<(message: ToPreview) => void>();
  post(message: FromPreview): void {
    this.posted.push(message);
  }
  onMessage(callback: (message: ToPreview) => void): () => void {
    this.listeners.add(callback);
    return () => this.listeners.delete(callback);
  }
  getState(): PreviewState | undefined {
    return this.state;
  }
  setState(state: PreviewState): void {
    this.state = state;
  }
  async send(message: ToPreview): Promise<void> {
    const parsed = ToPreviewSchema.parse(message);
    await act(() => {
      for (const listener of this.listeners) listener(parsed);
    });
  }
  snapshot(snapshot: PreviewSnapshot): Promise<void> {
    return this.send({ type: 'rennet/preview/snapshot', snapshot });
  }
}

async function mountPreview(dom: HappyDom, bridge: PreviewBridge): Promise<void> {
  await act(() => {
    render(h(PreviewApp, { bridge }), dom.root);
  });
}

describe('webview/preview: the preview app (happy-dom)', function () {
  this.timeout(120_000);
  const { dom, reinstall } = happyDomPerTest();
  let world: PreviewWorld;
  let preview: ReviewPreview;
  let bridge: FakePreviewBridge;
  const compositionId = () => (preview.composed.ok ? preview.composed.value.descriptor.compositionId : '');

  before(async () => {
    world = await previewWorld();
    preview = world.preview(world.standardAsks());
  });
  after(() => world.repo.cleanup());
  beforeEach(() => {
    bridge = new FakePreviewBridge();
  });

  it('says ready on mount, shows loading, keeps the session in its state once a snapshot arrives', async () => {
    await mountPreview(dom, bridge);
    assert.deepEqual(bridge.posted, [{ type: 'rennet/preview/ready' }]);
    assert.ok(one(dom.root, byTestId('preview-loading')));
    await bridge.snapshot(previewSnapshot(null));
    assert.match(text(one(dom.root, byTestId('post-unavailable'))), /Composing the review/);
    assert.deepEqual(bridge.state, { sessionId: 's-exits' });
  });

  it('shows the target, the verdict with how it was reached, the comments and the folded asks with their reasons', async () => {
    await mountPreview(dom, bridge);
    await bridge.snapshot(previewSnapshot(preview));
    assert.equal(text(one(dom.root, byTestId('preview-target'))), 'Post review · Pull Request #42 · acme/widgets');
    assert.equal(one(dom.root, byTestId('preview-entry')).getAttribute('data-entry'), 'teammate');
    assert.equal(one(dom.root, byTestId('verdict-event')).getAttribute('data-event'), 'REQUEST_CHANGES');
    assert.match(text(one(dom.root, byTestId('verdict-how'))), /a staged change request makes it Request changes/);
    const comments = all(dom.root, byTestId('preview-comment'));
    assert.deepEqual(
      comments.map((c) => [c.getAttribute('data-path'), c.getAttribute('data-side'), c.getAttribute('data-start-line'), c.getAttribute('data-line')]),
      [
        ['src/a.ts', 'RIGHT', null, '10'],
        ['wide.ts', 'RIGHT', '9', '11'],
      ],
    );
    assert.equal(text(one(comments[0]!, byTestId('comment-where'))), 'src/a.ts · new side · line 10 · change request');
    assert.ok(one(comments[0]!, 'strong'), 'a comment body is rendered Markdown');
    assert.equal(one(dom.root, byTestId('comment-count')).getAttribute('data-count'), '2');
    const folded = all(dom.root, byTestId('folded-ask'));
    assert.deepEqual(
      folded.map((f) => f.getAttribute('data-reason')),
      ['pathless', 'board-prose', 'outside-diff'],
    );
    assert.match(text(one(folded[2]!, byTestId('fold-reason'))), /None of its lines is on the forge’s diff/);
    // The anchor is the body note's Markdown, drawn as the forge draws it: the path in code, no backticks shown.
    const where = one(folded[2]!, byTestId('folded-where'));
    assert.equal(text(one(where, 'code')), 'src/a.ts');
    assert.doesNotMatch(text(where), /`/);
    assert.equal(one(dom.root, byTestId('preview-freshness')).getAttribute('data-state'), 'fresh');
  });

  it('renders the body as the forge does (marker hidden) and, toggled, the exact raw text', async () => {
    await mountPreview(dom, bridge);
    await bridge.snapshot(previewSnapshot(preview));
    assert.ok(preview.composed.ok);
    const body = preview.composed.value.descriptor.body;
    const rendered = one(dom.root, byTestId('body-rendered'));
    assert.doesNotMatch(text(rendered), /rennet-review/);
    assert.equal(one(dom.root, byTestId('body-marker')).getAttribute('data-marker-id'), preview.composed.value.markerId);
    await click(one(dom.root, byTestId('body-raw-toggle')));
    assert.equal(one(dom.root, byTestId('body-raw')).textContent, body, 'the raw view is the exact body, marker included');
    assert.equal(all(dom.root, byTestId('body-rendered')).length, 0);
    assert.equal(all(dom.root, byTestId('comment-raw')).length, 2);
    await click(one(dom.root, byTestId('body-raw-toggle')));
    assert.ok(one(dom.root, byTestId('body-rendered')));
  });

  it('the verdict control sends the override (and Clear), and waits for the next snapshot', async () => {
    await mountPreview(dom, bridge);
    await bridge.snapshot(previewSnapshot(preview));
    const choices = all(dom.root, byTestId('verdict-choice'));
    assert.deepEqual(
      choices.map((c) => c.getAttribute('data-choice')),
      ['approve', 'comment', 'request-changes', 'clear'],
    );
    assert.equal(one(dom.root, '[data-choice="clear"]').getAttribute('aria-pressed'), 'true', 'no override: the asks decide');
    await click(one(dom.root, '[data-choice="approve"]'));
    assert.deepEqual(bridge.posted.at(-1), { type: 'rennet/preview/setVerdict', verdict: 'approve' });
    assert.ok(
      all(dom.root, byTestId('verdict-choice')).every((c) => c.hasAttribute('disabled')),
      'busy until the recomposed preview arrives',
    );
    const overridden = world.preview(world.standardAsks().override('approve'));
    await bridge.snapshot(previewSnapshot(overridden));
    assert.equal(one(dom.root, byTestId('verdict-event')).getAttribute('data-event'), 'APPROVE');
    assert.equal(one(dom.root, '[data-choice="approve"]').getAttribute('aria-pressed'), 'true');
    await click(one(dom.root, '[data-choice="clear"]'));
    assert.deepEqual(bridge.posted.at(-1), { type: 'rennet/preview/setVerdict', verdict: null });
  });

  it('ONE Post button sends the shown composition; disabled while posting; the receipt replaces it', async () => {
    await mountPreview(dom, bridge);
    await bridge.snapshot(previewSnapshot(preview));
    assert.equal(all(dom.root, byTestId('post-review')).length, 1);
    await click(one(dom.root, byTestId('post-review')));
    assert.deepEqual(bridge.posted.at(-1), { type: 'rennet/preview/post', compositionId: compositionId() });
    assert.ok(one(dom.root, byTestId('post-review')).hasAttribute('disabled'));
    await click(one(dom.root, byTestId('post-review')));
    assert.equal(bridge.posted.filter((m) => m.type === 'rennet/preview/post').length, 1, 'a second click while in flight sends nothing');
    await bridge.snapshot(previewSnapshot(preview, { posting: true }));
    assert.ok(one(dom.root, byTestId('post-review')).hasAttribute('disabled'));
    const receipt = world.receipt(preview, { reused: true });
    await bridge.snapshot(previewSnapshot(world.preview(world.standardAsks(), { receipt })));
    assert.equal(all(dom.root, byTestId('post-review')).length, 0);
    const posted = one(dom.root, byTestId('posted'));
    assert.equal(text(one(posted, byTestId('posted-words'))), 'Posted: Request changes · 2 comments');
    assert.match(text(one(posted, byTestId('posted-reused'))), /already on GitHub/);
    await click(one(posted, byTestId('posted-link')));
    assert.deepEqual(bridge.posted.at(-1), { type: 'rennet/preview/openLink', url: receipt.url });
  });

  it('after a post, with nothing staged since, the preview shows the review as it was posted (not a new one), and a verdict choice composes a follow-up', async () => {
    const receipt = world.receipt(preview);
    // What the host answers once the post sent its asks: the composition of nothing, and the receipt it stands at.
    const after = world.preview(new Asks(), { receipt });
    assert.ok(after.composed.ok && after.composed.value.descriptor.event === 'APPROVE' && after.composed.value.placements.length === 0);
    await mountPreview(dom, bridge);
    await bridge.snapshot(previewSnapshot(after));
    assert.match(text(one(dom.root, byTestId('preview-as-posted'))), /as it was posted/);
    assert.equal(one(dom.root, byTestId('verdict-event')).getAttribute('data-event'), 'REQUEST_CHANGES', "the posted verdict, not the empty composition's APPROVE");
    assert.equal(all(dom.root, byTestId('preview-comment')).length, 2, 'the posted comments');
    assert.equal(all(dom.root, byTestId('post-review')).length, 0, 'no Post');
    assert.equal(text(one(dom.root, byTestId('posted-words'))), 'Posted: Request changes · 2 comments');
    // Every choice but "as the asks propose" (nothing is chosen now) starts a follow-up.
    assert.equal(one(dom.root, '[data-choice="clear"]').getAttribute('aria-pressed'), 'true');
    await click(one(dom.root, '[data-choice="request-changes"]'));
    assert.deepEqual(bridge.posted.at(-1), { type: 'rennet/preview/setVerdict', verdict: 'request-changes' });
  });

  it('a refused post is said where Post is: stale (composed again), head moved (Capture New Head), unauthorized (sign in)', async () => {
    await mountPreview(dom, bridge);
    const refusal = (code: 'stale-composition' | 'head-moved' | 'forge-unauthorized', repreviewed = false) => ({ code, message: `the host says ${code}`, compositionId: compositionId(), repreviewed });
    await bridge.snapshot(previewSnapshot(preview, { refusal: refusal('stale-composition', true) }));
    const stale = one(dom.root, byTestId('post-refused'));
    assert.equal(stale.getAttribute('data-code'), 'stale-composition');
    assert.match(text(stale), /composed again: what is shown now is what Post sends/);
    assert.ok(one(dom.root, byTestId('post-review')), 'Post stays: the reviewer posts the new one after reading it');

    await bridge.snapshot(previewSnapshot(preview, { refusal: refusal('head-moved') }));
    await click(one(dom.root, byTestId('post-repair')));
    assert.deepEqual(bridge.posted.at(-1), { type: 'rennet/preview/captureNewHead' });

    await bridge.snapshot(previewSnapshot(preview, { refusal: refusal('forge-unauthorized') }));
    assert.match(text(one(dom.root, byTestId('post-refused'))), /Accounts menu/);
    await click(one(dom.root, byTestId('post-repair')));
    assert.deepEqual(bridge.posted.at(-1), { type: 'rennet/preview/repair', action: 'sign-in-github' });
  });

  it('a moved head is stated above the review with Capture New Head', async () => {
    await mountPreview(dom, bridge);
    await bridge.snapshot(previewSnapshot(preview, { freshness: { capturedHeadSha: preview.target.headSha, liveHeadSha: 'e'.repeat(40), moved: true, state: 'open' } }));
    const note = one(dom.root, byTestId('preview-freshness'));
    assert.equal(note.getAttribute('data-state'), 'moved');
    await click(one(note, byTestId('capture-new-head')));
    assert.deepEqual(bridge.posted.at(-1), { type: 'rennet/preview/captureNewHead' });
  });

  it('a composition the host refuses: the reason where Post would be, no Post', async () => {
    await mountPreview(dom, bridge);
    const refused: ReviewPreview = { ...preview, composed: { ok: false, error: { reason: 'comment-too-long', message: 'the comment on src/a.ts:10 is 70000 characters' } } };
    await bridge.snapshot(previewSnapshot(refused));
    assert.equal(all(dom.root, byTestId('post-review')).length, 0);
    const reason = one(dom.root, byTestId('cannot-post'));
    assert.equal(reason.getAttribute('data-reason'), 'comment-too-long');
    assert.match(text(reason), /the comment on src\/a\.ts:10 is 70000 characters/);
    assert.equal(all(dom.root, byTestId('preview-verdict')).length, 0);
  });

  it('the target link goes through the extension (which opens only forge pages)', async () => {
    await mountPreview(dom, bridge);
    await bridge.snapshot(previewSnapshot(preview));
    await click(one(dom.root, byTestId('preview-target-link')));
    assert.deepEqual(bridge.posted.at(-1), { type: 'rennet/preview/openLink', url: 'https://github.com/acme/widgets/pull/42' });
    await click(one(dom.root, byTestId('preview-refresh')));
    assert.deepEqual(bridge.posted.at(-1), { type: 'rennet/preview/refresh' });
  });

  it('the reducer: a snapshot answers a click in flight; the contract refuses what it does not know', () => {
    const clicked = reducePreview(initialPreviewModel, { type: 'post-clicked', compositionId: 'x' });
    assert.equal(clicked.pendingPost, 'x');
    const answered = reducePreview(clicked, { type: 'message', message: { type: 'rennet/preview/snapshot', snapshot: previewSnapshot(preview, { posting: true }) } });
    assert.equal(answered.pendingPost, null);
    assert.equal(parseToPreview({ type: 'rennet/panel/snapshot' }).ok, false);
    assert.equal(parseToPreview({ type: 'rennet/preview/snapshot', snapshot: { ...previewSnapshot(preview), posting: 'yes' } }).ok, false);
  });

  it('hostile ask text renders inert (scripts ENABLED): nothing runs, no active element, no live bad link', async () => {
    await reinstall({ scripts: true });
    const hostile = world.preview(hostileAsks(world));
    assert.ok(hostile.composed.ok, 'the hostile asks compose');
    await mountPreview(dom, bridge);
    await bridge.snapshot(previewSnapshot(hostile));
    const pwned = () => (dom.window as unknown as { __pwned?: number }).__pwned ?? 0;
    assert.deepEqual(
      all(dom.root, 'script, iframe, object, embed, img, style, svg, form, input').map((e) => e.tagName),
      [],
    );
    for (const el of all(dom.root, '*')) {
      for (const name of el.getAttributeNames()) assert.ok(!/^on/i.test(name) && name !== 'style' && name !== 'src', `${el.tagName} carries ${name}`);
      const href = el.getAttribute('href');
      if (href !== null) assert.match(href, /^(https?:|mailto:|#)/i);
    }
    await click(one(dom.root, byTestId('body-raw-toggle')));
    assert.ok(text(one(dom.root, byTestId('body-raw'))).includes('<script>'), 'the raw view shows the markup as text');
    assert.equal(all(dom.root, 'script').length, 0);
    for (const button of all(dom.root, 'button')) await click(button);
    assert.equal(pwned(), 0, `the canary ran: ${CANARY}`);
  });
});

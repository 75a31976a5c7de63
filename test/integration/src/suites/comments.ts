// Asks staged on code lines in a real extension host: the comment box's "Stage Ask" handler
// (driven through the exported `stageLineComment`, which runs that same handler on a reply thread),
// the staged ask drawn as a native thread on every document showing its lines, the ask surviving a
// host restart, "Undo Last Ask Action", and the refusals (lines outside the hunks, empty text). The
// fixture's src/app.js has head hunks 2–13 and 17–30 (changed lines 5, 10, 20 and 26–27).
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { CommentThreadView, RennetApi } from '../../../../extension/api';
import type { SuiteContext } from './index';
import { FEATURE_BRANCH as BRANCH, rennetApi, sleep, unwrap, until } from './support';

const WORKING_TREE = { kind: 'working-tree', base: 'main' } as const;

/** Opens a review and waits until its board is the active tab, so it is the review the editor follows. */
async function activate(api: RennetApi, repo: string, target: typeof BRANCH | typeof WORKING_TREE, title: string): Promise<string> {
  const { sessionId } = unwrap(await api.openReview(repo, target), `openReview(${title})`);
  await until(
    () => vscode.window.tabGroups.activeTabGroup.activeTab?.label ?? null,
    (label) => label === `Rennet · ${title}`,
    `the active tab after opening ${title}`,
  );
  await sleep(200); // the panel's view-state event follows the tab change
  return sessionId;
}

function blobUri(patchsetId: string, file: string, side: 'base' | 'head'): vscode.Uri {
  return vscode.Uri.from({ scheme: 'rennet-blob', path: `/${file}`, query: new URLSearchParams({ patchset: patchsetId, side }).toString() });
}

/** A body as a reader sees it: the thread's Markdown is escaped text (extension/uiText.ts), so drop the escapes. */
const rendered = (markdown: string) => markdown.replace(/\\([!-/:-@[-`{-~])/g, '$1');
const withBody = (text: string) => (threads: CommentThreadView[]) => threads.find((t) => t.bodies.map(rendered).includes(text));

export function registerCommentSuites(ctx: SuiteContext): void {
  describe('comment threads: asks staged on changed lines', () => {
    let api: RennetApi;
    let sessionId = '';
    let appUri = '';
    let askId = '';
    let patchsetId = '';
    const TEXT = 'Why does line 5 change? (staged from the editor)';

    before(async () => {
      api = await rennetApi();
      sessionId = await activate(api, ctx.fixtureRepo, BRANCH, 'feature vs main');
      const document = await vscode.workspace.openTextDocument(vscode.Uri.file(path.join(ctx.fixtureRepo, 'src', 'app.js')));
      await vscode.window.showTextDocument(document, { viewColumn: vscode.ViewColumn.Beside, preview: false });
      appUri = document.uri.toString();
    });

    after(async () => {
      // Leave the branch review active, as the suites before this one had it.
      await api.openReview(ctx.fixtureRepo, BRANCH);
    });

    it('a comment on a changed line is staged through the comment box’s handler and drawn as a native thread', async () => {
      const staged = unwrap(await api.stageLineComment(appUri, 5, 5, TEXT), 'stageLineComment(src/app.js:5)');
      assert.equal(staged.sessionId, sessionId, 'the ask went to another session than the active review');
      askId = staged.askId;
      assert.match(askId, /^ask-/);

      const projection = await api.asks(sessionId);
      const ask = projection.asks.find((a) => a.id === askId);
      assert.ok(ask, `the projection has no ask ${askId}`);
      assert.equal(ask.state, 'staged');
      assert.equal(ask.text, TEXT);
      assert.equal(ask.intent, 'comment');
      assert.equal(ask.lane, 'changes', 'a branch review is one’s own work: its asks join the Changes lane a round dispatches');
      assert.equal(ask.anchor.kind, 'line');
      if (ask.anchor.kind === 'line') {
        patchsetId = ask.anchor.patchsetId;
        assert.deepEqual({ ...ask.anchor, patchsetId: '' }, { kind: 'line', patchsetId: '', path: 'src/app.js', side: 'head', startLine: 5, endLine: 5 });
      }

      const thread = await until(
        () => withBody(TEXT)(api.commentThreads(appUri)),
        (t) => t !== undefined,
        'the staged ask’s thread on src/app.js',
      );
      assert.deepEqual({ ...thread, bodies: thread?.bodies.map(rendered) }, { label: 'Staged ask · comment', contextValue: 'ask-staged-comment', startLine: 5, endLine: 5, bodies: [TEXT] });
    });

    it('the captured head shows the same thread; the captured base does not', async () => {
      assert.match(patchsetId, /^ps-/);
      const head = await vscode.workspace.openTextDocument(blobUri(patchsetId, 'src/app.js', 'head'));
      await until(
        () => withBody(TEXT)(api.commentThreads(head.uri.toString())),
        (t) => t?.startLine === 5 && t.endLine === 5,
        'the thread on the captured head',
      );
      const base = await vscode.workspace.openTextDocument(blobUri(patchsetId, 'src/app.js', 'base'));
      await sleep(500);
      assert.equal(withBody(TEXT)(api.commentThreads(base.uri.toString())), undefined, 'a head-side ask was drawn on the base');
    });

    it('a host restart reads the ask back and the thread stays', async () => {
      const before = await api.hostInfo();
      const after = await api.restartHost();
      assert.notEqual(after.pid, before.pid, 'the host was not restarted');
      const projection = await api.asks(sessionId);
      const ask = projection.asks.find((a) => a.id === askId);
      assert.equal(ask?.state, 'staged', `after the restart: ${JSON.stringify(ask)}`);
      await until(
        () => withBody(TEXT)(api.commentThreads(appUri)),
        (t) => t?.startLine === 5,
        'the thread after the restart',
      );
    });

    it('a range over lines outside the hunks, and an empty ask, are refused: nothing is staged or drawn', async () => {
      const before = await api.asks(sessionId);
      const outside = await api.stageLineComment(appUri, 13, 15, 'Spans unchanged lines');
      assert.equal(outside.ok, false, 'lines 14–15 are outside the hunks, yet the ask was staged');
      if (!outside.ok) {
        assert.equal(
          outside.error.message,
          "Lines 13–15 of src/app.js (new side) include 14–15, which are outside the change's hunks; asks go on changed lines only (here: 2–13, 17–30). Nothing was staged.",
        );
      }
      const empty = await api.stageLineComment(appUri, 5, 5, '   ');
      assert.equal(empty.ok, false, 'an empty ask was staged');
      if (!empty.ok) assert.match(empty.error.message, /An ask needs text/);
      const after = await api.asks(sessionId);
      assert.deepEqual(after.asks, before.asks, 'a refused ask changed the projection');
      assert.equal(withBody('Spans unchanged lines')(api.commentThreads(appUri)), undefined);
    });

    it('Undo Last Ask Action unstages it: the thread goes and the projection no longer has it', async () => {
      const undone = unwrap(await api.undoAsk(sessionId), 'undoAsk');
      assert.equal(undone.label, 'stage comment on src/app.js:5');
      await until(
        () => withBody(TEXT)(api.commentThreads(appUri)),
        (t) => t === undefined,
        'the thread after undo',
      );
      const projection = await api.asks(sessionId);
      assert.equal(
        projection.asks.find((a) => a.id === askId),
        undefined,
        'the undone ask is still in the projection',
      );
      const again = await api.undoAsk(sessionId);
      assert.equal(again.ok, false, 'a second undo found something to undo');
    });

    it('on a working-tree review the ask joins the Changes lane', async () => {
      const wtSession = await activate(api, ctx.fixtureRepo, WORKING_TREE, 'working tree vs main');
      assert.notEqual(wtSession, sessionId);
      const text = 'Rename this before committing';
      const staged = unwrap(await api.stageLineComment(appUri, 26, 27, text), 'stageLineComment on the working tree');
      assert.equal(staged.sessionId, wtSession);
      const ask = (await api.asks(wtSession)).asks.find((a) => a.id === staged.askId);
      assert.equal(ask?.lane, 'changes');
      const thread = await until(
        () => withBody(text)(api.commentThreads(appUri)),
        (t) => t !== undefined,
        'the working-tree ask’s thread',
      );
      assert.deepEqual([thread?.startLine, thread?.endLine], [26, 27]);
      unwrap(await api.undoAsk(wtSession), 'undoAsk on the working tree');
      await until(
        () => withBody(text)(api.commentThreads(appUri)),
        (t) => t === undefined,
        'the working-tree thread after undo',
      );
    });
  });
}

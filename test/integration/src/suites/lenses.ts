// Lens runs from VS Code end to end: the `rennet.harness.*` settings become the host's harnesses
// (`rennet/review/runLenses`), the host drafts in the background and pushes whole generations
// (`rennet/generation/changed`), and the extension relays them to the session's board panel
// (`rennet/panel/generation`). Sequence is drafted by the scripted vscode.lm provider of
// ../lmProvider.ts; every other lens is set to `none`, so its lane settles as a typed failure.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RennetApi } from '../../../../extension/api';
import type { GenerationSnapshot, HarnessConfig, LaneView } from '../../../../protocol/review';
import { MODELS, SCRIPTED_VENDOR, setScript } from '../lmProvider';
import type { SuiteContext } from './index';
import { FEATURE_BRANCH, panelSettled, rennetApi, SEQUENCE_SCRIPT, sequenceOnlyHarness, unwrap } from './support';

function lane(snapshot: GenerationSnapshot, lens: LaneView['lens']): LaneView {
  const found = snapshot.lanes.find((l) => l.lens === lens);
  assert.ok(found, `no ${lens} lane in ${JSON.stringify(snapshot.lanes.map((l) => l.lens))}`);
  return found;
}

export function registerLensSuites(ctx: SuiteContext): void {
  describe('lens runs: settings → runLenses → generation pushes → the board panel', () => {
    let api: RennetApi;
    let sessionId = '';
    let firstGeneration = '';

    before(async () => {
      api = await rennetApi();
      await sequenceOnlyHarness();
      // Re-opening reveals the session's panel, so its webview mounts and says ready.
      sessionId = unwrap(await api.openReview(ctx.fixtureRepo, FEATURE_BRANCH), 'openReview').sessionId;
    });

    after(async () => {
      await sequenceOnlyHarness(true);
    });

    it('drafts with the harnesses the settings name; the panel receives the generation as its lanes settle', async () => {
      setScript(SEQUENCE_SCRIPT);
      const started = unwrap(await api.runLenses(sessionId), 'runLenses');
      firstGeneration = started.generationId;
      assert.match(firstGeneration, /^g-[0-9a-f]{16}$/);

      const shown = await panelSettled(api, sessionId, firstGeneration);
      assert.equal(shown.sessionId, sessionId);
      assert.equal(shown.status, 'live');
      assert.deepEqual(
        shown.lanes.map((l) => l.lens),
        ['design', 'sequence', 'decisions', 'flagged', 'noise'],
      );

      const sequence = lane(shown, 'sequence');
      assert.equal(sequence.state, 'settled', `Sequence: ${JSON.stringify(sequence.failure)}`);
      assert.equal(sequence.board?.status, 'finished');
      assert.equal(sequence.board?.document.title, 'The feature branch in reading order');
      const steps = sequence.board?.elements.filter((e) => e.kind === 'order_step') ?? [];
      assert.deepEqual(
        steps.map((s) => (s as unknown as { title: string }).title),
        ['app.js changes line 5', 'The new feature file'],
      );
      assert.ok((sequence.board?.folds.length ?? 0) > 0, 'the Sequence board has no fold line (readBoard)');

      for (const lens of ['design', 'decisions', 'flagged'] as const) {
        const l = lane(shown, lens);
        assert.equal(l.state, 'failed', `${lens}: ${JSON.stringify(l)}`);
        assert.match(l.failure?.message ?? '', /^no model harness is configured: .*\(the settings choose no harness \(none\)/, `${lens}: ${l.failure?.message}`);
        assert.equal(l.failure?.retryable, false);
        assert.ok(l.board, `${lens}: the lane has no (empty) board`);
      }
      const noise = lane(shown, 'noise');
      assert.equal(noise.state, 'failed', JSON.stringify(noise));
      assert.match(noise.failure?.message ?? '', /Noise cannot be derived/);

      const spend = shown.spend.filter((s) => s.lens === 'sequence');
      assert.ok(spend.length >= 1 && spend.every((s) => s.harness === 'vscode-lm' && s.model === `${SCRIPTED_VENDOR}/${MODELS.drafter.id}`), JSON.stringify(shown.spend));
      assert.deepEqual(
        shown.spend.filter((s) => s.lens !== 'sequence'),
        [],
        'a lens set to none ran a seat',
      );
      // The lm suite's drafts were generations of this session too: now frozen, newest first.
      assert.ok(shown.frozen.length >= 1, `frozen: ${JSON.stringify(shown.frozen)}`);
      assert.ok(!shown.frozen.some((f) => f.generationId === firstGeneration));
    });

    it('a configuration the host cannot honour is refused with what to change, and the panel keeps its generation', async () => {
      const before = api.generation(sessionId);
      const bad: HarnessConfig = { default: 'openai', lenses: {}, vscodeLm: {}, openai: { baseUrl: 'https://models.example.com/v1', model: 'm' }, anthropic: {} };
      const refused = await api.runLenses(sessionId, bad);
      assert.equal(refused.ok, false, 'a non-loopback API without a key was accepted');
      if (!refused.ok) assert.match(refused.error.message, /needs an API key: run “Rennet: Set API Key”/);
      const noModel = await api.runLenses(sessionId, { ...bad, openai: { baseUrl: 'http://127.0.0.1:9/v1' } });
      assert.ok(!noModel.ok && /set rennet\.harness\.openai\.model/.test(noModel.error.message), JSON.stringify(noModel));
      assert.equal(api.generation(sessionId)?.generationId, before?.generationId);
    });

    it('after a host restart the panel is sent the generation again, read back from the store', async () => {
      const before = api.generation(sessionId);
      assert.ok(before, 'the panel has no generation');
      await api.restartHost();
      const end = Date.now() + 20_000;
      while (api.generation(sessionId) === before && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
      const after = api.generation(sessionId);
      assert.notEqual(after, before, 'the panel was not sent the generation again after the restart');
      assert.deepEqual(after, before, 'the generation read back after the restart differs from the one shown before');
    });

    it('a citation opens its lines: the workspace file when it still reads as captured, else the captured blob', async () => {
      const open = async (citation: { path: string; side: 'base' | 'head'; startLine: number; endLine: number }) => {
        await api.openCitation(sessionId, citation);
        const editor = vscode.window.activeTextEditor;
        assert.ok(editor, `no editor after opening ${JSON.stringify(citation)}`);
        return editor;
      };
      const head = await open({ path: 'src/app.js', side: 'head', startLine: 5, endLine: 6 });
      assert.equal(head.document.uri.scheme, 'file');
      assert.ok(head.document.uri.fsPath.endsWith(path.join('src', 'app.js')), head.document.uri.toString());
      assert.deepEqual([head.selection.start.line, head.selection.end.line], [4, 5]);
      assert.equal(head.document.getText(head.selection), 'app line 5 (changed)\napp line 6');

      const base = await open({ path: 'src/app.js', side: 'base', startLine: 5, endLine: 5 });
      assert.equal(base.document.uri.scheme, 'rennet-blob');
      assert.match(base.document.uri.query, /side=base/);
      assert.equal(base.document.getText(base.selection), 'app line 5');

      const deleted = await open({ path: 'obsolete.txt', side: 'head', startLine: 2, endLine: 2 });
      assert.equal(deleted.document.uri.scheme, 'rennet-blob');
      assert.match(deleted.document.uri.query, /side=base/, 'a deleted file opens its base blob');
      assert.equal(deleted.document.getText(deleted.selection), 'obsolete line 2');

      // Edited since the capture: line 5 of the file is no longer the cited line, the captured head is.
      const file = path.join(ctx.fixtureRepo, 'src', 'app.js');
      const original = fs.readFileSync(file, 'utf8');
      fs.writeFileSync(file, `// a line added after the capture\n${original}`);
      try {
        const edited = await open({ path: 'src/app.js', side: 'head', startLine: 5, endLine: 5 });
        assert.equal(edited.document.uri.scheme, 'rennet-blob');
        assert.match(edited.document.uri.query, /side=head/);
        assert.equal(edited.document.getText(edited.selection), 'app line 5 (changed)');
      } finally {
        fs.writeFileSync(file, original);
      }
    });

    it('“Rennet: Draft Boards” drafts the session again; the earlier generation is kept, frozen', async () => {
      setScript(SEQUENCE_SCRIPT);
      const generationId = (await vscode.commands.executeCommand('rennet.draftBoards', sessionId)) as string | undefined;
      assert.ok(generationId, 'the command answered no generation');
      assert.notEqual(generationId, firstGeneration);
      const shown = await panelSettled(api, sessionId, generationId);
      assert.equal(lane(shown, 'sequence').state, 'settled', JSON.stringify(lane(shown, 'sequence').failure));
      assert.equal(shown.frozen[0]?.generationId, firstGeneration, `frozen: ${JSON.stringify(shown.frozen)}`);
    });
  });
}

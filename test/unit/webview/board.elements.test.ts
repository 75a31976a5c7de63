import * as assert from 'node:assert/strict';
import { h } from 'preact';
import { ELEMENT_KINDS, LENS_ADMISSIBLE_ABSENCES, LENSES, LaneState, type LaneView, type Lens, type LensBoardView } from '../../../protocol';
import { BoardBody, LanePanel } from '../../../webview/board/Board';
import { GenerationView } from '../../../webview/board/GenerationView';
import { BOARDS, boardView, codeRef, decisionsBoard, designBoard, elements, flaggedBoard, generation, lane, noiseBoard, sequenceBoard, spend } from './boardFixtures';
import { all, byTestId, click, happyDomPerTest, key, mount, one, text } from './happyDom';

describe('webview/board: every element kind and lane state (happy-dom)', () => {
  const { dom, actions } = happyDomPerTest();

  const showBoard = (board: LensBoardView) => mount(dom, actions, h(BoardBody, { board }));
  const expandAll = async () => {
    for (const toggle of all(dom.root, byTestId('fold-toggle'))) if (toggle.getAttribute('aria-expanded') === 'false') await click(toggle);
  };
  const element = (id: string) => one(dom.root, `[data-testid="element"][data-id="${id}"]`);

  it('the fixtures cover every element kind', () => {
    const kinds = new Set(LENSES.flatMap((lens) => BOARDS[lens]().elements.map((e) => e.kind)));
    assert.deepEqual(
      [...ELEMENT_KINDS].filter((k) => !kinds.has(k)),
      [],
    );
  });

  describe('folded top-level sections', () => {
    it('start folded, with child headings as the preview and reader-facing counts', async () => {
      await showBoard(flaggedBoard());
      const fold = element('f1');
      assert.equal(fold.getAttribute('data-kind'), 'section');
      assert.equal(fold.getAttribute('data-expanded'), 'false');
      const toggle = one(fold, byTestId('fold-toggle'));
      assert.equal(toggle.tagName, 'BUTTON');
      assert.equal(toggle.getAttribute('aria-expanded'), 'false');
      assert.equal(text(one(fold, byTestId('fold-counts'))), '2 findings');
      assert.deepEqual(all(fold, byTestId('fold-preview-entry')).map(text), ['The last attempt still sleeps before giving up', 'A thrown non-Error value is lost']);
      assert.equal(all(dom.root, '[data-kind="finding"]').length, 0, 'findings stay folded');
      // The orphan section (reaches no finding) has no fold line and is not shown.
      assert.equal(all(dom.root, '[data-id="f9"]').length, 0);
    });

    it("a round successor's touched sections (new, reworked) open expanded once; carried ones stay folded; a reader's fold sticks", async () => {
      const pool = elements([
        { id: 's1', kind: 'section', title: 'Carried', body_markdown: 'Unchanged.', delta: null },
        { id: 's2', kind: 'section', title: 'Reworked', body_markdown: 'Changed.', delta: 'reworked' },
        { id: 's3', kind: 'section', title: 'New', body_markdown: 'Added.', delta: 'new' },
      ]);
      await showBoard(boardView('decisions', pool));
      assert.deepEqual(
        ['s1', 's2', 's3'].map((id) => element(id).getAttribute('data-expanded')),
        ['false', 'true', 'true'],
      );
      assert.deepEqual(all(dom.root, byTestId('delta')).map(text), ['reworked', 'new']);
      await click(one(element('s2'), byTestId('fold-toggle')));
      await showBoard(boardView('decisions', pool, { title: 'A later snapshot' }));
      assert.equal(element('s2').getAttribute('data-expanded'), 'false', 'the same stamps do not reopen what the reader folded');
    });

    it('expand with aria-expanded, and a preview entry opens the section and focuses its element', async () => {
      await showBoard(flaggedBoard());
      const entry = all(element('f1'), byTestId('fold-preview-entry'))[1] as HTMLElement;
      await click(entry);
      const fold = element('f1');
      assert.equal(fold.getAttribute('data-expanded'), 'true');
      const toggle = one(fold, byTestId('fold-toggle'));
      assert.equal(toggle.getAttribute('aria-expanded'), 'true');
      assert.ok(dom.document.getElementById(toggle.getAttribute('aria-controls') ?? ''), 'aria-controls names the body');
      assert.equal((dom.document.activeElement as HTMLElement | null)?.getAttribute('data-id'), 'f5');
      await click(toggle);
      assert.equal(element('f1').getAttribute('data-expanded'), 'false');
    });

    it('preview the opening text, clamped to two lines by a class, when there are no titled children', async () => {
      await showBoard(noiseBoard());
      const preview = one(element('n1'), byTestId('fold-preview'));
      assert.ok(preview.classList.contains('rn-clamp-2'));
      assert.match(text(preview), /^A sentence is wrapped onto two lines/);
      assert.equal(text(one(element('n1'), byTestId('fold-counts'))), '3 changed regions');
    });

    it('expand all and collapse all', async () => {
      await showBoard(designBoard());
      const button = one(dom.root, byTestId('expand-all'));
      await click(button);
      assert.ok(all(dom.root, byTestId('fold-toggle')).every((t) => t.getAttribute('aria-expanded') === 'true'));
      await click(one(dom.root, byTestId('expand-all')));
      assert.ok(all(dom.root, byTestId('fold-toggle')).every((t) => t.getAttribute('aria-expanded') === 'false'));
    });
  });

  describe('element kinds', () => {
    it('finding: severity and claim, category, agreement marks, parts, remedy callout, anchors as code cards', async () => {
      await showBoard(flaggedBoard());
      await expandAll();
      const f = element('f4');
      assert.equal(f.getAttribute('data-kind'), 'finding');
      assert.equal(f.tagName, 'ARTICLE');
      assert.equal(text(one(f, byTestId('severity'))), 'major');
      assert.match(text(one(f, 'h3, h4')), /major The last attempt still sleeps before giving up/);
      assert.equal(text(one(f, byTestId('category'))), 'reliability');
      assert.equal(text(one(f, byTestId('raised-by'))), 'raised by claude');
      assert.equal(text(one(f, byTestId('accord'))), 'concur');
      assert.equal(text(one(f, byTestId('concurrence'))), 'claude 1/1, codex 1/1');
      assert.deepEqual(all(f, '.rn-part-title').map(text), ['Who waits', 'How long']);
      const remedy = one(f, byTestId('remedy'));
      assert.equal(text(one(remedy, '.rn-callout-label')), 'Proposed remedy');
      assert.equal(text(one(remedy, '.rn-md')), 'Skip the wait when the attempt is the last one.');
      assert.deepEqual(
        all(f, byTestId('code-card')).map((c) => c.getAttribute('data-path')),
        ['src/retry.ts', 'src/upload.ts'],
      );
      // One model tallied: a split reads as solo (no second model reviewed it), data-accord keeps the stamp.
      assert.equal(text(one(element('f5'), byTestId('accord'))), 'solo');
      assert.equal(one(element('f5'), byTestId('accord')).getAttribute('data-accord'), 'split');
      assert.equal(text(one(element('f8'), byTestId('accord'))), 'conflict');
      assert.equal(element('f8').getAttribute('data-severity'), 'nit');
      // Anchored code refs show at their finding, not again in place.
      assert.equal(all(dom.root, '[data-kind="code_ref"]').length, 0);
    });

    it('code_ref: a code card with the file name and View posting openCitation, the range and path:start-end', async () => {
      await showBoard(designBoard());
      await expandAll();
      const card = one(element('d4'), byTestId('code-card'));
      assert.equal(card.getAttribute('data-path'), 'src/upload.ts');
      assert.equal(card.getAttribute('data-side'), 'head');
      assert.equal(text(one(card, byTestId('code-card-file'))), 'upload.ts');
      assert.equal(text(one(card, byTestId('code-card-range'))), 'lines 5–9');
      assert.match(text(card), /src\/upload\.ts:5-9/);
      assert.match(text(card), /The retry wrapper/);
      await click(one(card, byTestId('code-card-file')));
      await click(one(card, byTestId('code-card-view')));
      assert.deepEqual(actions.calls, [
        { type: 'openCitation', path: 'src/upload.ts', side: 'head', startLine: 5, endLine: 9 },
        { type: 'openCitation', path: 'src/upload.ts', side: 'head', startLine: 5, endLine: 9 },
      ]);
    });

    it('code_ref in place (not referenced) is an element; base-side ranges say so', async () => {
      const board = boardView('sequence', elements([codeRef('r1', 'src/old.ts', 3, 4, { side: 'base' })]));
      await showBoard(board);
      const el = element('r1');
      assert.equal(el.getAttribute('data-kind'), 'code_ref');
      assert.equal(text(one(el, byTestId('code-card-range'))), 'base lines 3–4');
      await click(one(el, byTestId('code-card-view')));
      assert.deepEqual(actions.calls, [{ type: 'openCitation', path: 'src/old.ts', side: 'base', startLine: 3, endLine: 4 }]);
    });

    it('decision: heading, statement, rationale, alternatives, ONE tabbed viewer for several sites, model analysis when inferred', async () => {
      await showBoard(decisionsBoard());
      await expandAll();
      const d = element('c5');
      assert.match(text(one(d, 'h3, h4')), /^Exponential back-off model analysis$/);
      assert.equal(all(d, byTestId('model-analysis')).length, 1);
      assert.equal(text(one(d, '.rn-decision-statement')), 'Each retry waits twice as long as the one before.');
      assert.match(text(one(d, '.rn-decision-rationale')), /A struggling server gets room to recover\./);
      assert.deepEqual(all(d, '.rn-alternatives li').map(text), ['A fixed delay between attempts.', 'No delay at all.']);
      const viewer = one(d, byTestId('evidence-viewer'));
      const tabs = all(viewer, byTestId('evidence-tab'));
      assert.deepEqual(tabs.map(text), ['retry.ts:8', 'upload.ts:4-6', 'old.ts:10-12']);
      assert.equal(all(viewer, byTestId('code-card')).length, 1, 'one visible card');
      assert.equal(one(viewer, byTestId('code-card')).getAttribute('data-path'), 'src/retry.ts');
      await click(tabs[1] as HTMLElement);
      assert.equal(one(viewer, byTestId('code-card')).getAttribute('data-path'), 'src/upload.ts');
      assert.equal(tabs[1]?.getAttribute('aria-selected'), 'true');
      await key(all(viewer, byTestId('evidence-tab'))[1] as HTMLElement, 'ArrowRight');
      assert.equal(one(viewer, byTestId('code-card')).getAttribute('data-side'), 'base');
      // The single-site decision has no tab strip and no model-analysis label.
      const single = element('c6');
      assert.equal(all(single, byTestId('evidence-viewer')).length, 0);
      assert.equal(all(single, byTestId('code-card')).length, 1);
      assert.equal(all(single, byTestId('model-analysis')).length, 0);
    });

    it('decision without a separate title stays readable: its statement is the heading', async () => {
      const board = boardView('decisions', elements([{ id: 'x', kind: 'decision', title: '', statement: 'Keep the cache.', rationale: 'It is warm.', alternatives: [], evidence: [] }]));
      await showBoard(board);
      assert.equal(text(one(element('x'), 'h3')), 'Keep the cache.');
    });

    it('order_step: numbered, explanation before its span code card; callout child', async () => {
      await showBoard(sequenceBoard());
      await expandAll();
      const step = element('s3');
      assert.equal(step.getAttribute('data-kind'), 'order_step');
      assert.match(text(one(step, 'h4')), /^1 upload hands the request to retry$/);
      assert.equal(one(step, byTestId('code-card')).getAttribute('data-path'), 'src/upload.ts');
      const second = element('s5');
      assert.match(text(one(second, 'h4')), /^2 /);
      const callout = element('s6');
      assert.equal(callout.getAttribute('data-kind'), 'callout');
      assert.equal(callout.getAttribute('data-tone'), 'question');
      assert.equal(text(one(callout, '.rn-callout-label')), 'Question');
      assert.equal(text(one(callout, '.rn-md')), 'Is the delay capped?');
    });

    it('prose: Markdown with citations as buttons that post openCitation (head side); links stay links', async () => {
      await showBoard(sequenceBoard());
      const prose = element('s7');
      const citation = one(prose, byTestId('citation'));
      assert.equal(citation.tagName, 'BUTTON');
      assert.equal(text(citation), 'src/retry.ts:1-20');
      const link = one(prose, 'a');
      assert.equal(link.getAttribute('href'), 'https://example.com/retry');
      assert.equal(link.getAttribute('rel'), 'noopener noreferrer');
      await click(citation);
      assert.deepEqual(actions.calls, [{ type: 'openCitation', path: 'src/retry.ts', side: 'head', startLine: 1, endLine: 20 }]);
    });

    it('round_outcome: outcome, ask, note, evidence', async () => {
      await showBoard(sequenceBoard());
      await expandAll();
      const outcome = element('s9');
      assert.equal(text(one(outcome, byTestId('outcome'))), 'addressed');
      assert.match(text(outcome), /Ask ask-1/);
      assert.equal(one(outcome, byTestId('code-card')).getAttribute('data-path'), 'src/retry.ts');
    });

    it('requirement with scenarios as WHEN/THEN rows, source citation, related files, trace', async () => {
      await showBoard(designBoard());
      await expandAll();
      const req = element('d4');
      assert.match(text(one(req, 'h4')), /^Retry a failed upload added$/);
      assert.equal(text(one(req, '.rn-shall')), 'The client SHALL retry a failed upload up to three times.');
      const source = one(req, `.rn-sources ${byTestId('citation')}`);
      assert.equal(text(source), 'openspec/changes/retry/specs/upload/spec.md:12');
      assert.deepEqual(all(req, byTestId('source-chip')).map(text), ['src/upload.ts', 'src/retry.ts']);
      const clauses = (id: string) => all(element(id), byTestId('clause')).map((c) => `${c.getAttribute('data-keyword')}: ${text(one(c, 'dd'))}`);
      assert.deepEqual(clauses('d5'), ['WHEN: the server answers 503', 'AND: fewer than three attempts were made', 'THEN: the upload is sent again']);
      assert.deepEqual(clauses('d6'), ['WHEN: the server answers 400', 'THEN: the error is returned at once']);
      assert.deepEqual(clauses('d7'), []);
      assert.match(text(element('d7')), /An upload with no body is never retried\./);
      await click(source);
      await click(all(req, byTestId('source-chip'))[0] as HTMLElement);
      assert.deepEqual(actions.calls, [
        { type: 'openCitation', path: 'openspec/changes/retry/specs/upload/spec.md', side: 'head', startLine: 12, endLine: 12 },
        { type: 'openFile', path: 'src/upload.ts', side: 'head' },
      ]);
    });

    it('task: check marks in words; stat: labels and values; section: source chips and delta', async () => {
      await showBoard(designBoard());
      await expandAll();
      const done = element('d9');
      assert.equal(done.tagName, 'LI');
      assert.equal(done.getAttribute('data-done'), 'true');
      assert.equal(one(done, byTestId('task-check')).getAttribute('aria-label'), 'done');
      assert.equal(text(one(done, byTestId('task-check'))), '✓');
      assert.equal(one(element('d11'), byTestId('task-check')).getAttribute('aria-label'), 'not done');
      assert.equal(all(dom.root, 'ul.rn-tasks').length, 1, 'consecutive tasks are one list');
      const stat = element('d1');
      assert.deepEqual(
        all(stat, '.rn-stat').map((s) => `${text(one(s, 'dt'))}=${text(one(s, 'dd'))}`),
        ['Format=OpenSpec', 'Requirements=2', 'Tasks=3'],
      );
      const section = element('d3');
      assert.equal(text(one(section, `.rn-fold-heading ${byTestId('delta')}`)), 'new');
      assert.equal(text(all(section, byTestId('source-chip'))[0]), 'openspec/changes/retry/specs/upload/spec.md');
      const note = element('d13');
      assert.equal(note.getAttribute('data-tone'), 'note');
      assert.equal(text(one(note, byTestId('citation'))), 'src/retry.ts:3-9');
    });

    it('noise_group and noise_member: regions as path:start-end, each opening its range', async () => {
      await showBoard(noiseBoard());
      await expandAll();
      const group = element('n1');
      assert.equal(group.getAttribute('data-kind'), 'noise_group');
      const members = all(group, '[data-kind="noise_member"]');
      assert.deepEqual(
        members.map((m) => text(one(m, byTestId('region')))),
        ['README.md:1-4', 'docs/guide.md:10', 'docs/old.md:3-7'],
      );
      await click(one(members[2] as HTMLElement, byTestId('region')));
      assert.deepEqual(actions.calls, [{ type: 'openCitation', path: 'docs/old.md', side: 'base', startLine: 3, endLine: 7 }]);
      const nested = element('n6');
      assert.match(text(one(nested, 'h4')), /^Import order 1 changed region$/);
      assert.equal(text(one(nested, byTestId('region'))), 'src/index.ts:1-3');
    });
  });

  describe('every lane state', () => {
    const panel = (l: LaneView, readOnly = false) => mount(dom, actions, h(LanePanel, { lane: l, spend: [], readOnly }));

    it('covers the whole LaneState enum', () => {
      assert.deepEqual([...LaneState.options].sort(), ['absent', 'failed', 'queued', 'settled', 'waiting', 'working']);
    });

    it('settled: the lens name opens the document, the authored title as subtitle, the intro, the board', async () => {
      await panel(lane('flagged', 'settled'));
      const board = one(dom.root, byTestId('board'));
      assert.equal(board.getAttribute('data-lens'), 'flagged');
      assert.equal(board.getAttribute('data-state'), 'settled');
      assert.ok(board.classList.contains('rn-measure-reading'));
      assert.equal(text(one(board, 'h2')), 'Flagged');
      assert.equal(text(one(board, byTestId('board-title'))), 'What could go wrong');
      assert.match(text(one(board, '.rn-board-intro')), /^Two defects/);
      assert.equal(all(board, byTestId('board-body')).length, 1);
    });

    it('settled Design reads in the wider structured measure', async () => {
      await panel(lane('design', 'settled'));
      assert.ok(one(dom.root, byTestId('board')).classList.contains('rn-measure-structured'));
    });

    it('settled with nothing written says so', async () => {
      await panel(lane('flagged', 'settled', { board: boardView('flagged', []) }));
      assert.match(text(one(dom.root, byTestId('lane-empty'))), /settled without writing anything/);
    });

    it('failed: the message, retryable or terminal, and Draft again posting runLenses (never "empty")', async () => {
      await panel(lane('design', 'failed', { failure: { message: 'claude: not logged in', retryable: false, attempts: 2 } }));
      const failed = one(dom.root, byTestId('lane-failed'));
      assert.equal(failed.getAttribute('data-retry'), 'terminal');
      assert.equal(text(one(failed, byTestId('lane-failure-message'))), 'claude: not logged in');
      assert.equal(text(one(failed, byTestId('lane-retry'))), 'terminal');
      assert.doesNotMatch(text(dom.root), /empty/i);
      const again = one(failed, byTestId('draft-again'));
      assert.equal(again.tagName, 'BUTTON');
      await click(again);
      assert.deepEqual(actions.calls, [{ type: 'runLenses' }]);
      assert.equal(text(one(dom.root, byTestId('draft-again'))), 'Drafting requested…');
    });

    it('failed and retryable; an unfinished draft is counted, not shown', async () => {
      await panel(lane('flagged', 'failed', { failure: { message: 'rate limited', retryable: true, attempts: 3 }, board: flaggedBoard() }));
      assert.equal(text(one(dom.root, byTestId('lane-retry'))), 'retryable');
      assert.match(text(dom.root), /The unfinished draft \(\d+ elements\) is not shown/);
      assert.equal(all(dom.root, byTestId('element')).length, 0);
    });

    it('failed in a frozen generation is read-only: no Draft again', async () => {
      await panel(lane('design', 'failed', { failure: { message: 'x', retryable: true, attempts: 1 } }), true);
      assert.equal(all(dom.root, byTestId('draft-again')).length, 0);
    });

    for (const lens of LENSES) {
      for (const row of LENS_ADMISSIBLE_ABSENCES[lens]) {
        it(`absent (${lens}, ${row.absence}): the absence meaning`, async () => {
          await panel(lane(lens as Lens, 'absent', { absence: row.absence, board: boardView(lens, [], { status: 'absent', absence: row.absence }) }));
          const absent = one(dom.root, byTestId('lane-absent'));
          assert.equal(absent.getAttribute('data-absence'), row.absence);
          assert.equal(text(one(absent, byTestId('lane-absence-meaning'))), row.meaning);
        });
      }
    }

    it('working with no elements yet: "being written…", never "empty"', async () => {
      await panel(lane('sequence', 'working', { board: boardView('sequence', [], { status: 'drafting' }) }));
      const pending = one(dom.root, byTestId('lane-pending'));
      assert.equal(pending.getAttribute('data-state'), 'working');
      assert.match(text(pending), /Being written…/);
      assert.doesNotMatch(text(dom.root), /empty/i);
    });

    it('working with a board under way: what is written is readable', async () => {
      await panel(lane('sequence', 'working', { board: sequenceBoard() }));
      assert.match(text(one(dom.root, byTestId('lane-pending'))), /Still being written/);
      assert.ok(all(dom.root, byTestId('element')).length > 0);
    });

    it('queued and waiting say so; Noise waiting explains why', async () => {
      await panel(lane('design', 'queued'));
      assert.match(text(one(dom.root, byTestId('lane-pending'))), /Design is queued; it has not started\./);
      await panel(lane('noise', 'waiting'));
      assert.match(text(one(dom.root, byTestId('lane-pending'))), /Noise starts after Design, Sequence, Decisions and Flagged have settled/);
    });
  });

  describe('the generation', () => {
    it('one spend/timing line per generation; "no usage reported" when no turn reported', async () => {
      await mount(
        dom,
        actions,
        h(GenerationView, {
          snapshot: generation({ spend: [spend('flagged', { inputTokens: null, outputTokens: null })] }),
          lens: null,
          onSelectLens: () => {},
        }),
      );
      const line = one(dom.root, byTestId('generation-spend'));
      assert.match(text(line), /^Generation g-001122334455 · 1 seat turn · no usage reported · 9 tool calls \(1 refused\) · 12\.5 s seat time · 40\.0 s wall clock · first board after 21\.0 s$/);
      assert.match(text(one(dom.root, byTestId('lane-spend'))), /Flagged spend: 1 seat turn · no usage reported/);
    });

    it('no switcher without earlier generations', async () => {
      await mount(dom, actions, h(GenerationView, { snapshot: generation(), lens: null, onSelectLens: () => {} }));
      assert.equal(all(dom.root, byTestId('generation-switcher')).length, 0);
    });

    it('a switcher when frozen generations exist: posts selectGeneration; a frozen one is read-only', async () => {
      const frozen = [{ generationId: 'g-old', patchsetId: 'ps-0', createdAt: '2026-01-01T09:00:00.000Z' }];
      await mount(dom, actions, h(GenerationView, { snapshot: generation({ frozen }), lens: null, onSelectLens: () => {} }));
      const select = one(dom.root, byTestId('generation-switcher')) as HTMLSelectElement;
      assert.deepEqual(
        all(select, 'option').map((o) => o.getAttribute('value')),
        ['', 'g-old'],
      );
      assert.match(text(all(select, 'option')[1]), /2026-01-01 09:00 UTC · g-old \(read-only\)/);
      await actChange(select, 'g-old');
      assert.deepEqual(actions.calls, [{ type: 'selectGeneration', generationId: 'g-old' }]);

      actions.calls.length = 0;
      const failing = generation({
        generationId: 'g-old',
        status: 'frozen',
        frozen,
        lanes: LENSES.map((l) => lane(l, l === 'flagged' ? 'failed' : 'settled', l === 'flagged' ? { failure: { message: 'x', retryable: true, attempts: 1 } } : {})),
      });
      await mount(dom, actions, h(GenerationView, { snapshot: failing, lens: null, onSelectLens: () => {} }));
      assert.equal(one(dom.root, byTestId('generation')).getAttribute('data-status'), 'frozen');
      assert.equal((one(dom.root, byTestId('generation-switcher')) as HTMLSelectElement).value, 'g-old');
      assert.equal(all(dom.root, byTestId('draft-again')).length, 0, 'frozen generations are read-only');
      await click(one(dom.root, byTestId('show-live')));
      await actChange(one(dom.root, byTestId('generation-switcher')) as HTMLSelectElement, '');
      assert.deepEqual(actions.calls, [
        { type: 'selectGeneration', generationId: null },
        { type: 'selectGeneration', generationId: null },
      ]);
    });
  });

  async function actChange(select: HTMLSelectElement, value: string): Promise<void> {
    const { act } = await import('preact/test-utils');
    await act(() => {
      select.value = value;
      const EventCtor = (globalThis as unknown as { window: { Event: typeof Event } }).window.Event;
      select.dispatchEvent(new EventCtor('change', { bubbles: true }));
    });
  }
});

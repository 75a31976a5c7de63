/**
 * Code cards with their captured lines (webview/board/CodeCard.tsx), rendered into happy-dom: the
 * excerpts arrive through ExcerptsContext exactly as GenerationView provides them, built by the
 * host's own buildExcerpts over the fixture capture (boardFixtures.ts).
 */
import { escapeInvisible } from '../../../protocol/text';
import * as assert from 'node:assert/strict';
import { h } from 'preact';
import type { CodeExcerpt, DiffLine, ElementOf, Lens } from '../../../protocol';
import { excerptKey } from '../../../protocol';
import { CodeCard } from '../../../webview/board/CodeCard';
import { CodeCard as ReExported } from '../../../webview/board/Elements';
import { ExcerptsContext, excerptRows, NOT_SENT_NOTE, type ExcerptMap } from '../../../webview/board/excerpts';
import { GenerationView } from '../../../webview/board/GenerationView';
import { codeRef, elements, generation } from './boardFixtures';
import { CANARY, PAYLOADS } from './hostileFixtures';
import { all, byTestId, click, happyDomPerTest, mount, one, recordingActions, text } from './happyDom';

const refOf = (path: string, start: number, end: number, side: 'base' | 'head' = 'head') => elements([codeRef('r1', path, start, end, { side })])[0] as ElementOf<'code_ref'>;

const line = (kind: DiffLine['kind'], oldLine: number | null, newLine: number | null, text: string): DiffLine => ({ kind, oldLine, newLine, text });

function excerptOf(ref: ElementOf<'code_ref'>, fields: Partial<CodeExcerpt>): CodeExcerpt {
  return { path: ref.path, side: ref.side, startLine: ref.start_line, endLine: ref.end_line, state: 'captured', lines: [], clipped: false, note: null, ...fields };
}

const keyOf = (ref: ElementOf<'code_ref'>) => excerptKey({ path: ref.path, side: ref.side, startLine: ref.start_line, endLine: ref.end_line });

/** `marker old new | text` per rendered row, with `*` on cited rows. */
const rowsOf = (card: HTMLElement) =>
  all(card, byTestId('code-line')).map(
    (row) =>
      `${row.getAttribute('data-cited') === 'true' ? '*' : ' '}${(row.querySelector('.rn-code-marker')?.textContent ?? '?').replace(' ', '·')} ${row.getAttribute('data-old') ?? '-'} ${row.getAttribute('data-new') ?? '-'} | ${row.querySelector('.rn-code-text')?.textContent ?? ''}`,
  );

describe('webview/board: code cards show the captured lines (happy-dom)', () => {
  const { dom, actions } = happyDomPerTest();

  const showCard = (ref: ElementOf<'code_ref'>, excerpts: ExcerptMap | null) => mount(dom, actions, h(ExcerptsContext.Provider, { value: excerpts }, h(CodeCard, { codeRef: ref })));

  async function showLens(lens: Lens) {
    await mount(dom, actions, h(GenerationView, { snapshot: generation(), lens, onSelectLens: () => undefined }));
    for (const toggle of all(dom.root, byTestId('fold-toggle'))) if (toggle.getAttribute('aria-expanded') === 'false') await click(toggle);
  }
  const cardOf = (elementId: string) => one(one(dom.root, `[data-testid="element"][data-id="${elementId}"]`), byTestId('code-card'));

  it('Elements.tsx re-exports the one CodeCard', () => {
    assert.equal(ReExported, CodeCard);
  });

  it('a head span of a modified file: numbers on both sides, markers, the replaced lines, the cited rows marked', async () => {
    await showLens('decisions');
    const card = cardOf('c6');
    assert.equal(card.getAttribute('data-excerpt'), 'captured');
    assert.equal(card.getAttribute('data-path'), 'src/retry.ts');
    await click(one(dom.root, `[data-testid="element"][data-id="c5"] [data-testid="evidence-tab"]:nth-child(2)`));
    const upload = one(one(dom.root, '[data-testid="element"][data-id="c5"]'), byTestId('code-card'));
    assert.equal(upload.getAttribute('data-path'), 'src/upload.ts');
    assert.deepEqual(rowsOf(upload), [
      " + - 1 | import { retry } from './retry';",
      ' · 2 2 | ',
      ' · 3 3 | export async function upload(url: string, body: Blob): Promise<Response> {',
      " - 4 - |   const response = await fetch(url, { method: 'PUT', body });",
      ' - 5 - |   if (!response.ok) throw new Error(`upload failed: ${response.status}`);',
      ' - 6 - |   return response;',
      '*+ - 4 |   const payload = await body.arrayBuffer();',
      '*+ - 5 |   return retry(async () => {',
      "*+ - 6 |     const response = await fetch(url, { method: 'PUT', body: payload });",
      ' + - 7 |     if (response.status >= 500) throw new Error(`upload failed: ${response.status}`);',
      ' + - 8 |     return response;',
      ' + - 9 |   }, { attempts: 3 });',
    ]);
    for (const row of all(upload, byTestId('code-line'))) {
      assert.equal(row.getAttribute('data-kind'), { '+': 'add', '-': 'del', ' ': 'context' }[row.querySelector('.rn-code-marker')?.textContent ?? ''] ?? '?');
      assert.equal(row.children.length, 4, 'old number, new number, marker, text');
    }
    assert.equal(all(upload, byTestId('code-excerpt-note')).length, 0, 'a whole captured excerpt needs no sentence');
    assert.equal(all(upload, byTestId('code-card-view')).length, 0, 'the file button opens the range; the lines are on the card');
    await click(one(upload, byTestId('code-card-file')));
    assert.deepEqual(actions.calls, [{ type: 'openCitation', path: 'src/upload.ts', side: 'head', startLine: 4, endLine: 6 }]);
  });

  it('a base span of a deleted file: old numbers only, deletions, the cited rows marked', async () => {
    await showLens('decisions');
    const viewer = one(dom.root, '[data-testid="element"][data-id="c5"]');
    await click(all(viewer, byTestId('evidence-tab'))[2] as HTMLElement);
    const card = one(viewer, byTestId('code-card'));
    assert.equal(card.getAttribute('data-side'), 'base');
    assert.deepEqual(rowsOf(card), [
      ' - 7 - |   }',
      ' - 8 - | }',
      ' - 9 - | ',
      '*- 10 - | export async function uploadOrLog(url: string, body: Blob): Promise<void> {',
      '*- 11 - |   await upload(url, body).catch((error) => console.error(error));',
      '*- 12 - | }',
    ]);
  });

  it('an added file on the Flagged lens: every row an addition, the cited three marked', async () => {
    await showLens('flagged');
    const card = cardOf('f5');
    const cited = all(card, '[data-testid="code-line"][data-cited="true"]').map((r) => r.getAttribute('data-new'));
    assert.deepEqual(cited, ['6', '7', '8']);
    assert.deepEqual(
      all(card, byTestId('code-line')).map((r) => r.getAttribute('data-new')),
      ['3', '4', '5', '6', '7', '8', '9', '10', '11'],
    );
    assert.ok(all(card, byTestId('code-line')).every((r) => r.getAttribute('data-kind') === 'add' && !r.hasAttribute('data-old')));
  });

  it('keeps whitespace and tabs as written, drops a trailing CR, marks a missing final newline, and shows a gap between hunks', async () => {
    const ref = refOf('src/a.ts', 2, 40);
    const excerpt = excerptOf(ref, {
      lines: [line('context', 1, 1, '\tindented  twice'), line('add', null, 2, 'dos line\r'), line('context', 39, 40, 'far'), { ...line('del', 40, null, 'last'), noNewlineAtEof: true }],
    });
    await showCard(ref, { [keyOf(ref)]: excerpt });
    const card = one(dom.root, byTestId('code-card'));
    const texts = all(card, `${byTestId('code-line')} .rn-code-text`).map((t) => t.textContent);
    assert.deepEqual(texts, ['\tindented  twice', 'dos line', 'far', 'last (no newline at end of file)']);
    assert.equal(all(card, byTestId('code-gap')).length, 1);
    const gapIndex = all(card, 'tr').findIndex((tr) => tr.getAttribute('data-testid') === 'code-gap');
    assert.equal(gapIndex, 2, 'the gap sits where the numbering jumps');
    assert.ok(one(card, '.rn-code-scroll').querySelector('table'), 'the table scrolls inside its own box');
  });

  const STATES: Array<[CodeExcerpt['state'], string]> = [
    ['truncated', 'Lines from 1,200 of src/a.ts were not captured: its patch is over the 256 KiB per-file limit. Open the file to read them.'],
    ['binary', 'src/a.ts is a binary file: it has no lines to show.'],
    ['submodule', 'src/a.ts is a submodule: its content is another repository and is not captured here.'],
    ['not-captured', 'src/a.ts is not a changed file of this capture, so no lines of it were captured.'],
    ['omitted', "These lines were not sent: this generation's excerpts already carry the 40,000-line limit. Open the file to read them."],
  ];
  for (const [state, note] of STATES) {
    it(`state ${state}: no table, the sentence, and View still opens the range`, async () => {
      const ref = refOf('src/a.ts', 1200, 1210);
      await showCard(ref, { [keyOf(ref)]: excerptOf(ref, { state, note }) });
      const card = one(dom.root, byTestId('code-card'));
      assert.equal(card.getAttribute('data-excerpt'), state);
      assert.equal(all(card, 'table').length, 0);
      const shown = one(card, byTestId('code-excerpt-note'));
      assert.equal(shown.getAttribute('data-state'), state);
      assert.equal(text(shown), note);
      await click(one(card, byTestId('code-card-view')));
      assert.deepEqual(actions.calls, [{ type: 'openCitation', path: 'src/a.ts', side: 'head', startLine: 1200, endLine: 1210 }]);
    });
  }

  it('a state that arrives without its sentence still says something true', async () => {
    const ref = refOf('src/a.ts', 3, 4);
    await showCard(ref, { [keyOf(ref)]: excerptOf(ref, { state: 'binary', note: null }) });
    assert.match(text(one(dom.root, byTestId('code-excerpt-note'))), /binary file/);
  });

  it('clipped: the lines that were sent, and a sentence saying the rest were cut', async () => {
    const ref = refOf('src/long.ts', 1, 450);
    const lines = Array.from({ length: 400 }, (_, i) => line('add', null, i + 1, `long ${i + 1}`));
    const note = 'Showing the first 400 of 450 lines; open the file for the rest.';
    await showCard(ref, { [keyOf(ref)]: excerptOf(ref, { lines, clipped: true, note }) });
    const card = one(dom.root, byTestId('code-card'));
    assert.equal(all(card, byTestId('code-line')).length, 400);
    const shown = one(card, byTestId('code-excerpt-note'));
    assert.equal(shown.getAttribute('data-clipped'), 'true');
    assert.equal(text(shown), note);
  });

  it('no excerpt for the range: says the lines were not sent, keeps path:range and View', async () => {
    const ref = refOf('src/a.ts', 5, 9);
    const other = refOf('src/a.ts', 5, 8);
    await showCard(ref, { [keyOf(other)]: excerptOf(other, { lines: [line('add', null, 5, 'x')] }) });
    const card = one(dom.root, byTestId('code-card'));
    assert.equal(card.getAttribute('data-excerpt'), 'not-sent');
    assert.equal(all(card, byTestId('code-line')).length, 0);
    const note = one(card, byTestId('code-excerpt-note'));
    assert.equal(note.getAttribute('data-state'), 'not-sent');
    assert.equal(text(note), NOT_SENT_NOTE);
    assert.match(text(card), /src\/a\.ts:5-9/);
    await click(one(card, byTestId('code-card-view')));
    assert.deepEqual(actions.calls, [{ type: 'openCitation', path: 'src/a.ts', side: 'head', startLine: 5, endLine: 9 }]);
    // Outside any generation (no provider at all), the same.
    await mount(dom, actions, h(CodeCard, { codeRef: ref }));
    assert.equal(one(dom.root, byTestId('code-excerpt-note')).getAttribute('data-state'), 'not-sent');
  });
});

describe('webview/board: hostile excerpt lines render as text (happy-dom, scripts ENABLED)', () => {
  const { dom } = happyDomPerTest({ scripts: true });

  it('markup, handlers and script URLs in captured lines and notes never reach the DOM as elements', async () => {
    const ref = refOf('src/evil.ts', 1, PAYLOADS.length);
    const lines = PAYLOADS.map((payload, i) => line(i % 3 === 0 ? 'add' : i % 3 === 1 ? 'del' : 'context', i % 3 === 0 ? null : i + 1, i % 3 === 1 ? null : i + 1, payload));
    const excerpts: ExcerptMap = {
      [keyOf(ref)]: excerptOf(ref, { lines, clipped: true, note: `<script>${CANARY}</script><img src=x onerror="${CANARY}">` }),
    };
    const actions = recordingActions();
    await mount(dom, actions, h(ExcerptsContext.Provider, { value: excerpts }, h(CodeCard, { codeRef: ref })));
    const card = one(dom.root, byTestId('code-card'));
    for (const control of all(card, 'button, tr, td')) control.click();
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal((dom.window as unknown as { __pwned?: number }).__pwned ?? 0, 0, 'nothing executed');
    assert.deepEqual(
      all(card, 'script, img, svg, iframe, style, link, object, a, details, div:not(.rn-code-scroll)').map((e) => e.tagName),
      [],
    );
    for (const el of all(card, '*')) for (const name of el.getAttributeNames()) assert.ok(!/^on/i.test(name) && name !== 'style' && name !== 'src', `${el.tagName} carries ${name}`);
    // Every line reads as written; bidi controls and NULs show as visible escapes instead of reordering or hiding text.
    assert.deepEqual(
      all(card, `${byTestId('code-line')} .rn-code-text`).map((t) => t.textContent),
      PAYLOADS.map(escapeInvisible),
    );
    assert.ok(
      PAYLOADS.some((p) => escapeInvisible(p) !== p),
      'the corpus carries an invisible character',
    );
    assert.match(text(one(card, byTestId('code-excerpt-note'))), /^<script>window\.__pwned/);
  });
});

describe('webview/board: excerptRows (pure)', () => {
  it('marks cited rows on the excerpt’s side; an unnumbered line counts at the gap before the next line', () => {
    const lines = [line('context', 7, 7, 'a'), line('del', 8, null, 'b'), line('add', null, 8, 'c'), line('context', 9, 9, 'd'), line('del', 10, null, 'e')];
    const head = excerptRows({ side: 'head', startLine: 8, endLine: 8, lines });
    assert.deepEqual(
      head.map((r) => (r.type === 'line' ? r.cited : 'gap')),
      [false, false, true, false, false],
    );
    const base = excerptRows({ side: 'base', startLine: 8, endLine: 10, lines });
    assert.deepEqual(
      base.map((r) => (r.type === 'line' ? r.cited : 'gap')),
      [false, true, true, true, true],
    );
  });

  it('puts a gap row where either side’s numbering jumps', () => {
    const rows = excerptRows({ side: 'head', startLine: 1, endLine: 1, lines: [line('context', 1, 1, 'a'), line('add', null, 2, 'b'), line('context', 20, 21, 'c')] });
    assert.deepEqual(
      rows.map((r) => r.type),
      ['line', 'line', 'gap', 'line'],
    );
  });
});

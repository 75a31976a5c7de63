import assert from 'node:assert/strict';
import { buildCitationIndex } from '../../../host/board/citations';
import { startSeatServer } from '../../../host/board/mcpServer';
import { ANSWER, ANSWER_MAX_BYTES, checkAnswer, explainPrompt, explainSurface, provenanceLine, READ_ELEMENT, READ_EXCERPT, READ_QUOTE, type ExplainSurface } from '../../../host/asks/explainTools';
import { lensHarnessFromConfig, assignmentFromConfig } from '../../../host/harness/harnessConfig';
import { LENSES, RESULT_MAX_BYTES, type BoardElement } from '../../../protocol/board';
import type { Patchset } from '../../../protocol/patchset';
import { EXPLAIN_PROMPT } from '../../../prompts/manifest';
import { callTool, connectClient, mintedId } from '../../contract/mcpFixture';
import { seatKit, type SeatKit } from '../../servers/seatKit';
import { BOTH, config, MISSING, ports } from '../harness/harnessConfigFixtures';

/**
 * The explainer's prompt and read-only tools (host/asks/explainTools.ts) over a REAL board written
 * through a real BoardSeat on a real captured change (src/app.ts changed at lines 5 and 30), and
 * lensHarnessFromConfig against assignmentFromConfig.
 */

const QUOTE = 'The fifth line now says it changed.';

interface Drafted {
  kit: SeatKit;
  elements: ReadonlyMap<string, BoardElement>;
  step: string;
  section: string;
  cite: string;
}

async function drafted(): Promise<Drafted> {
  const kit = await seatKit('sequence');
  const call = (name: string, input: Record<string, unknown>) => kit.seat.call(name, input);
  const cite = mintedId(call('cite', { path: 'src/app.ts', side: 'head', start_line: 4, end_line: 6 }));
  const section = mintedId(call('add_section', { title: 'Reading order', body_markdown: 'Two lines of the module change.' }));
  const step = mintedId(call('add_order_step', { title: 'Line five changes', explanation_markdown: QUOTE, span: cite, parent_id: section }));
  return { kit, elements: kit.seat.state.elements, step, section, cite };
}

function surfaceOf(d: Drafted, quote = QUOTE, elementId = d.step): ExplainSurface {
  return explainSurface({
    anchor: { kind: 'quote', generationId: 'g-0123456789abcdef', lens: 'sequence', elementId, quote },
    elements: d.elements,
    boardTitle: 'Two lines change',
    patchset: d.kit.patchset as Patchset,
    paths: buildCitationIndex(d.kit.patchset),
  });
}

describe('explain: the prompt', () => {
  it('is a routable header and the static explain.md, the same for any change, within its pinned budget', () => {
    for (const lens of LENSES) {
      const text = explainPrompt(lens);
      assert.match(text.split('\n')[0] as string, /^# Rennet: (Design|Sequence|Decisions|Flagged|Noise) \(explain\)$/);
      assert.ok(Buffer.byteLength(text) <= EXPLAIN_PROMPT.budgetBytes, `${lens}: ${Buffer.byteLength(text)} bytes, budget ${EXPLAIN_PROMPT.budgetBytes}`);
      assert.ok(text.endsWith('\n') && !text.endsWith('\n\n'));
      for (const tool of [READ_QUOTE, READ_ELEMENT, READ_EXCERPT, ANSWER]) assert.ok(text.includes(`\`${tool}\``), `${lens}: the prompt does not teach ${tool}`);
    }
    assert.equal(explainPrompt('sequence').replace('Sequence', 'Flagged'), explainPrompt('flagged'), 'only the header differs between lenses');
  });

  it('ends an answer with which harness and model wrote it, and says when no model was reported', () => {
    assert.equal(provenanceLine('openai-compatible', 'gpt-x'), '— explained by openai-compatible · gpt-x');
    assert.equal(provenanceLine('claude-code', null), '— explained by claude-code · model not reported');
  });
});

describe('explain: the read-only tools over a real board and capture', function () {
  this.timeout(30_000);
  let d: Drafted;
  before(async () => {
    d = await drafted();
  });
  after(() => d.kit.cleanup());

  it('read_quote: the quote, the element with its parent, its own text and the code it cites', () => {
    const result = surfaceOf(d).call(READ_QUOTE, {});
    assert.equal(result.isError, false, result.text);
    assert.ok(result.text.includes(`<<<\n${QUOTE}\n>>>`));
    assert.ok(result.text.includes(`element ${d.step} (order_step), under ${d.section} (section: Reading order)`), result.text);
    assert.ok(result.text.includes('### Line five changes'));
    assert.ok(result.text.includes(`- ${d.cite}: src/app.ts, head side, lines 4-6`), result.text);
  });

  it('read_element: any element as JSON with its children; an unknown id is refused, naming the quoted one', () => {
    const surface = surfaceOf(d);
    const section = surface.call(READ_ELEMENT, { id: d.section });
    assert.equal(section.isError, false);
    const parsed = JSON.parse(section.text) as { element: { id: string; title: string }; children: Array<{ id: string; kind: string }> };
    assert.equal(parsed.element.title, 'Reading order');
    assert.deepEqual(parsed.children, [{ id: d.step, kind: 'order_step' }]);
    const unknown = surface.call(READ_ELEMENT, { id: 'e999' });
    assert.equal(unknown.isError, true);
    assert.match(unknown.text, new RegExp(`no element e999 .* sits in ${d.step}`));
    assert.equal(surface.call(READ_ELEMENT, {}).isError, true, 'a missing id is refused');
  });

  it('read_excerpt: captured diff lines with both line numbers and marks; outside the hunks and unknown paths say so', () => {
    const surface = surfaceOf(d);
    const head = surface.call(READ_EXCERPT, { path: 'src/app.ts', side: 'head', start_line: 5, end_line: 5 });
    assert.equal(head.isError, false, head.text);
    assert.match(head.text, /^src\/app\.ts \(head side\), line 5; columns: old line, new line/);
    assert.match(head.text, /^ {4}5 {7}-line 5$/m, 'the deleted base line, placed before head line 5');
    assert.match(head.text, /^ {10}5 \+changed line 5$/m, 'the added head line');
    assert.match(head.text, /^ {4}2 {5}2  line 2$/m, 'context within three lines');
    assert.ok(!head.text.includes('changed line 30'), 'the other hunk is not in a range that does not reach it');
    const base = surface.call(READ_EXCERPT, { path: 'src/app.ts', side: 'base', start_line: 30, end_line: 30 });
    assert.match(base.text, /-line 30$/m);
    const gap = surface.call(READ_EXCERPT, { path: 'src/app.ts', side: 'head', start_line: 15, end_line: 18 });
    assert.equal(gap.isError, true);
    assert.match(gap.text, /No captured hunk of src\/app\.ts covers head lines 15–18/);
    const other = surface.call(READ_EXCERPT, { path: 'src/other.ts', side: 'head', start_line: 1, end_line: 2 });
    assert.equal(other.isError, true);
    assert.match(other.text, /Changed paths: src\/app\.ts/);
    assert.equal(surface.call(READ_EXCERPT, { path: 'src/app.ts', side: 'head', start_line: 9, end_line: 3 }).isError, true);
    assert.equal(surface.call(READ_EXCERPT, { path: 'src/app.ts', side: 'head', start_line: 1, end_line: 1000 }).isError, true);
  });

  it('answer: once, cited as repo-relative path:line, bounded; refusals record nothing', () => {
    const surface = surfaceOf(d);
    const refusedWith = (markdown: string, pattern: RegExp) => {
      const r = surface.call(ANSWER, { markdown });
      assert.equal(r.isError, true, `accepted: ${markdown.slice(0, 80)}`);
      assert.match(r.text, pattern);
      assert.equal(surface.answer, null);
    };
    refusedWith('It changes a line.', /cites no code/);
    refusedWith('See `src/app.ts:5` only in code.', /cites no code/);
    refusedWith('See /home/me/repo/src/app.ts:5.', /not a repo-relative path:line \(absolute\); write the path from the repository root, e\.g\. src\/app\.ts:5/);
    refusedWith('See app.ts:5.', /bare-basename/);
    refusedWith(`src/app.ts:5 ${'x'.repeat(ANSWER_MAX_BYTES)}`, /over the \d+-byte ceiling/);
    refusedWith('   ', /blank|not valid/);
    const okText = 'Line five now reads "changed line 5" (src/app.ts:5), so callers see the new text.';
    const accepted = surface.call(ANSWER, { markdown: `  ${okText}\n` });
    assert.equal(accepted.isError, false, accepted.text);
    assert.equal(surface.answer, okText);
    const second = surface.call(ANSWER, { markdown: 'Another take: src/app.ts:30.' });
    assert.equal(second.isError, true);
    assert.match(second.text, /already handed in/);
    assert.equal(surface.answer, okText, 'the first answer stands');
    assert.deepEqual(surface.stats(), { calls: 8, refusals: 7 });
    assert.equal(checkAnswer('Read src/app.ts:27-33.', buildCitationIndex(d.kit.patchset)).ok, true);
  });

  it('bounds every result to the seat ceiling, with a marker (a quote at its 16 KiB limit)', () => {
    const long = 'A long passage. '.repeat(1000);
    const result = surfaceOf(d, long).call(READ_QUOTE, {});
    assert.ok(Buffer.byteLength(result.text) <= RESULT_MAX_BYTES, `${Buffer.byteLength(result.text)} bytes`);
    assert.match(result.text, /…\(cut: the result was \d+ bytes, over the 4096-byte ceiling; read_element e\d+ gives the element whole\)$/);
  });

  it('answers an unknown tool by naming the tools', () => {
    const r = surfaceOf(d).call('write_board', {});
    assert.equal(r.isError, true);
    assert.match(r.text, /read_quote, read_element, read_excerpt, answer/);
  });

  it('is served over the seat MCP server as is (what a CLI harness connects to)', async () => {
    const surface = surfaceOf(d);
    const server = await startSeatServer({ seat: surface });
    const client = await connectClient(server.url, server.headers);
    try {
      const listed = await client.listTools();
      assert.deepEqual(
        listed.tools.map((t) => t.name),
        [READ_QUOTE, READ_ELEMENT, READ_EXCERPT, ANSWER],
      );
      const quote = await callTool(client, READ_QUOTE);
      assert.ok(quote.text.includes(QUOTE));
      const answered = await callTool(client, ANSWER, { markdown: 'It is line five: src/app.ts:5.' });
      assert.equal(answered.isError, false, answered.text);
      assert.equal(surface.answer, 'It is line five: src/app.ts:5.');
    } finally {
      await client.close();
      await server.close();
    }
  });
});

describe('explain: the harness of a lens, as a draft of that lens gets it', () => {
  it('picks what assignmentFromConfig gives the lens (Flagged: its compiler)', async () => {
    const cfg = config({ default: 'auto', lenses: { decisions: 'openai' }, openai: { baseUrl: 'http://127.0.0.1:9/v1', model: 'm' } });
    const assignment = await assignmentFromConfig(cfg, ports(BOTH));
    for (const lens of ['sequence', 'decisions', 'flagged'] as const) {
      const { harness, hint } = await lensHarnessFromConfig(cfg, lens, ports(BOTH));
      const drafted = lens === 'flagged' ? assignment.flagged.compiler : assignment[lens];
      assert.equal(harness?.kind, drafted?.kind, lens);
      assert.equal(hint, null);
    }
  });

  it('none, or auto finding nothing: no harness, with the hint a draft would give', async () => {
    const none = await lensHarnessFromConfig(config({ default: 'none' }), 'sequence', ports(BOTH));
    assert.equal(none.harness, null);
    assert.match(none.hint ?? '', /the settings choose no harness \(none\)/);
    const auto = await lensHarnessFromConfig(config({ default: 'auto' }), 'design', ports(MISSING));
    assert.equal(auto.harness, null);
    assert.match(auto.hint ?? '', /auto discovery found no model harness \(claude not found on PATH; codex not found on PATH; VS Code lists no chat models\)/);
  });

  it('resolves only the lens asked about: another lens’s broken setting does not refuse it', async () => {
    const cfg = config({ default: 'none', lenses: { sequence: 'openai', decisions: 'anthropic' }, openai: { baseUrl: 'http://127.0.0.1:9/v1', model: 'm' } });
    const chosen = await lensHarnessFromConfig(cfg, 'sequence', ports(MISSING));
    assert.equal(chosen.harness?.kind, 'openai-compatible');
    await assert.rejects(lensHarnessFromConfig(cfg, 'decisions', ports(MISSING)), /the anthropic harness needs a model/);
  });
});

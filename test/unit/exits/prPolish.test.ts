import assert from 'node:assert/strict';
import { GITHUB_REVIEW_BODY_MAX_CHARS } from '../../../protocol/exits';
import { PR_OPENER_PROMPT } from '../../../prompts/manifest';
import { PR_TITLE_MAX_CHARS } from '../../../host/exits/prDraft';
import { checkDescription, checkTitle, polishEvidenceId, polishSurface, prOpenerPrompt, READ_DRAFT, SET_DESCRIPTION, SET_TITLE, type PolishEvidence } from '../../../host/exits/prPolish';

/**
 * The pull-request opener's own tools (pure): the draft reaches the model only through read_draft,
 * the title and description are checked as they are handed in, and the evidence id moves with
 * every input that could change the text — and with nothing else.
 */
describe('host/exits/prPolish: the opener surface and its evidence', () => {
  const draft = { title: 'Retry uploads', body: '## Commits\n\n- Retry uploads (abc1234)' };
  const commits = [{ sha: 'a'.repeat(40), subject: 'Retry uploads' }];

  it('the prompt is static, within its budget, and names only its tools', () => {
    const text = prOpenerPrompt();
    assert.ok(text.startsWith('# Rennet: Design (pull request)\n\n'));
    assert.ok(Buffer.byteLength(text) <= PR_OPENER_PROMPT.budgetBytes, `${Buffer.byteLength(text)} bytes, budget ${PR_OPENER_PROMPT.budgetBytes}`);
    for (const tool of [READ_DRAFT, SET_TITLE, SET_DESCRIPTION]) assert.ok(text.includes(`\`${tool}\``), `the prompt does not teach ${tool}`);
    assert.doesNotMatch(text, /\bgit (diff|show|log)\b/);
  });

  it('read_draft answers the draft and the commit subjects; set_title and set_description record checked text', () => {
    const surface = polishSurface({ draft, commits });
    assert.deepEqual(surface.tools.map((t) => t.name), [READ_DRAFT, SET_TITLE, SET_DESCRIPTION]);
    const read = surface.call(READ_DRAFT, {});
    assert.equal(read.isError, false);
    assert.deepEqual(JSON.parse(read.text), { title: draft.title, description: draft.body, commits: ['Retry uploads'] });
    assert.equal(surface.title, null);
    const t = surface.call(SET_TITLE, { title: '  Retry failed uploads  ' });
    assert.equal(t.isError, false);
    assert.match(t.text, /Now hand in the description/);
    assert.equal(surface.title, 'Retry failed uploads');
    const d = surface.call(SET_DESCRIPTION, { markdown: 'Uploads retry.\r\n\r\nWith back-off.\n\n' });
    assert.equal(d.isError, false);
    assert.match(d.text, /End your turn now/);
    assert.equal(surface.description, 'Uploads retry.\n\nWith back-off.');
    assert.deepEqual(surface.stats(), { calls: 3, refusals: 0 });
  });

  it('refuses what a forge would not take, recording nothing: a blank, multi-line, control-character or over-long title; a blank or over-long description; unknown tools and bad inputs', () => {
    const surface = polishSurface({ draft, commits });
    for (const title of ['   ', 'one\ntwo', 'bell\u0007', 'x'.repeat(PR_TITLE_MAX_CHARS + 1)]) {
      const r = surface.call(SET_TITLE, { title });
      assert.equal(r.isError, true, JSON.stringify(title));
      assert.match(r.text, /not recorded/);
    }
    for (const markdown of [' \n ', 'y'.repeat(GITHUB_REVIEW_BODY_MAX_CHARS + 1)]) assert.equal(surface.call(SET_DESCRIPTION, { markdown }).isError, true);
    assert.equal(surface.call('write_board', {}).isError, true);
    assert.equal(surface.call(SET_TITLE, { title: 7 }).isError, true);
    assert.equal(surface.call(SET_TITLE, { title: 'ok', extra: 1 }).isError, true);
    assert.equal(surface.title, null);
    assert.equal(surface.description, null);
    assert.equal(surface.stats().refusals, 9);
    assert.equal(checkTitle('x'.repeat(PR_TITLE_MAX_CHARS)).ok, true);
    assert.equal(checkDescription('a\tb').ok, true, 'a tab is text');
  });

  it('the evidence id changes with the branch, base, commits, generation, patchset, draft, harness or model, and only with them', () => {
    const base: PolishEvidence = { branch: 'feat/x', base: 'main', commits, generationId: 'g-1', patchsetId: 'p-1', draft, harness: { kind: 'openai-compatible', model: 'm' } };
    const id = polishEvidenceId(base);
    assert.match(id, /^[0-9a-f]{64}$/);
    assert.equal(polishEvidenceId({ ...base, commits: [...commits] }), id, 'deterministic');
    const variants: PolishEvidence[] = [
      { ...base, branch: 'feat/y' },
      { ...base, base: 'develop' },
      { ...base, commits: [{ sha: 'b'.repeat(40), subject: 'Retry uploads' }] },
      { ...base, generationId: 'g-2' },
      { ...base, generationId: null },
      { ...base, patchsetId: 'p-2' },
      { ...base, draft: { ...draft, body: `${draft.body}\n- more` } },
      { ...base, harness: { kind: 'anthropic', model: 'm' } },
      { ...base, harness: { kind: 'openai-compatible', model: null } },
    ];
    const ids = new Set([id, ...variants.map(polishEvidenceId)]);
    assert.equal(ids.size, variants.length + 1);
  });
});

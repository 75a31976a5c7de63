import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GITHUB_REVIEW_BODY_MAX_CHARS } from '../../../protocol/exits';
import type { Patchset } from '../../../protocol/patchset';
import { READ_DIFF, READ_TOOL_NAMES } from '../../../protocol/read';
import type { SeatSpend } from '../../../protocol/review';
import { PR_OPENER_PROMPT } from '../../../prompts/manifest';
import { PR_TITLE_MAX_CHARS } from '../../../host/exits/prDraft';
import {
  checkDescription,
  checkTitle,
  PR_POLISHED_EVENT_KIND,
  polishDraft,
  polishEvidenceId,
  polishSurface,
  prOpenerPrompt,
  READ_DRAFT,
  SET_DESCRIPTION,
  SET_TITLE,
  type PolishEvidence,
} from '../../../host/exits/prPolish';
import type { Harness, TurnRequest, TurnResult } from '../../../host/pipeline/ports';
import type { Store } from '../../../host/store';
import type { TestRepo } from '../../fixtures/gitRepo';
import { Temp, codeChange, openStore, sessionFor } from '../pipeline/fixtures';

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
    assert.deepEqual(
      surface.tools.map((t) => t.name),
      [READ_DRAFT, SET_TITLE, SET_DESCRIPTION],
    );
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

/**
 * The opener's one turn over a real capture and store. The opener is an in-process harness that
 * behaves like a model and reports the harness kind it stands for: it reads the draft and a changed
 * file's diff, hands in the text, and records the directory and tools its turn was given. A CLI
 * opener runs in the snapshot of the reviewed head under the data directory (the checkout is on
 * main); the turn's spend, its reads included, rides on the pr.polished event.
 */
class ReadingOpener implements Harness {
  readonly origin = 'other' as const;
  readonly model = 'scripted-opener';
  readonly turns: Array<{ cwd: string; offered: string[]; diff: string }> = [];
  constructor(readonly kind: string) {}
  async runTurn(request: TurnRequest): Promise<TurnResult> {
    assert.equal((await request.tools.call(READ_DRAFT, {})).isError, false);
    const diff = await request.tools.call(READ_DIFF, { path: 'src/app.ts' });
    assert.equal(diff.isError, false, diff.text);
    this.turns.push({ cwd: request.cwd, offered: request.tools.tools.map((t) => t.name), diff: diff.text });
    assert.equal((await request.tools.call(SET_TITLE, { title: 'Spell out two lines of the app' })).isError, false);
    assert.equal((await request.tools.call(SET_DESCRIPTION, { markdown: 'Lines ten and thirty of src/app.ts are spelled out.' })).isError, false);
    return { outcome: 'ended', message: null, usage: null };
  }
}

describe('host/exits/prPolish: the opener turn reads the reviewed head, and its reads are spend', function () {
  this.timeout(60_000);
  const temp = new Temp();
  let repo: TestRepo;
  let patchset: Patchset;
  let store: Store;
  let sessionId: string;

  before(async () => {
    ({ repo, patchset } = await codeChange());
    store = await openStore(temp);
    sessionId = sessionFor(store, repo, patchset);
    repo.git('checkout', '-q', 'main');
  });
  after(() => {
    store?.close();
    repo?.cleanup();
    temp.cleanup();
  });

  async function polishWith(opener: ReadingOpener, title: string) {
    const logged: string[] = [];
    const polished = await polishDraft(
      { store, harness: async () => ({ harness: opener, hint: null }), log: (level, message) => logged.push(`${level} ${message}`) },
      {
        sessionId,
        repoRoot: repo.dir,
        patchset,
        generationId: null,
        branch: 'feature',
        base: 'main',
        commits: [{ sha: patchset.head, subject: 'change' }],
        draft: { title, body: '- change', sources: ['commits'] },
      },
    );
    assert.equal(polished.polish.state, 'polished', JSON.stringify(polished.polish));
    const event = store
      .readEvents(sessionId)
      .filter((e) => e.kind === PR_POLISHED_EVENT_KIND)
      .at(-1)?.payload as { title: string; spend?: SeatSpend } | undefined;
    return { logged, event };
  }

  it('an HTTP opener runs in the repository (no snapshot); its spend is on the pr.polished event', async () => {
    const http = new ReadingOpener('openai-compatible');
    const { event } = await polishWith(http, 'Change (http)');
    assert.equal(http.turns[0]?.cwd, repo.dir);
    assert.ok(!existsSync(join(store.dir, 'heads', patchset.id)), 'no head snapshot for an HTTP opener');
    assert.equal(event?.spend?.seat, 'design:pr-opener');
    assert.equal(event?.spend?.readCalls, 1);
  });

  it('a CLI opener runs in the snapshot of the reviewed head; read_diff answers the head; the spend counts its reads', async () => {
    const claude = new ReadingOpener('claude-code');
    const { logged, event } = await polishWith(claude, 'Change (cli)');
    const turn = claude.turns[0];
    assert.ok(turn);
    assert.equal(turn.cwd, join(store.dir, 'heads', patchset.id));
    assert.ok(readFileSync(join(turn.cwd, 'src/app.ts'), 'utf8').includes('line ten\n'), 'the snapshot holds the reviewed head');
    assert.ok(!readFileSync(join(repo.dir, 'src/app.ts'), 'utf8').includes('line ten'), 'the checkout is on main');
    for (const name of READ_TOOL_NAMES) assert.ok(turn.offered.includes(name), `the opener was not offered ${name}`);
    assert.match(turn.diff, /^\+ +10 \| line ten$/m);
    const spend = event?.spend;
    assert.deepEqual(
      [spend?.seat, spend?.lens, spend?.harness, spend?.model, spend?.toolCalls, spend?.refusals, spend?.readCalls, spend?.inputTokens],
      ['design:pr-opener', 'design', 'claude-code', 'scripted-opener', 4, 0, 1, null],
    );
    assert.ok((spend?.readBytes ?? 0) >= Buffer.byteLength(turn.diff) && typeof spend?.readMs === 'number', JSON.stringify(spend));
    assert.ok(
      logged.some((l) => l.startsWith('info pull request polish by claude-code (scripted-opener): spend {') && l.includes('1 read, ')),
      JSON.stringify(logged),
    );
  });
});

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { readReviewMarker, ReviewDescriptor } from '../../protocol/exits';
import { ReviewReport } from '../../protocol/review';
import { isolatedCliEnv, tempDir, type TestRepo } from '../fixtures/gitRepo';
import { startFakeForge, type FakeForge } from '../servers/fakeForge';
import { openAiToolResults, startOpenAiServer } from '../servers/openai';
import { reviewRepo } from '../unit/review/fixtures';

/**
 * The CLI contract of the forge commands (built dist/cli.js, a separate process) against the
 * loopback fake forge: `review --pr` (its report names the request), `ask`, `post-review --dry-run`
 * (the descriptor) and `post-review` (what posts equals the dry run, once), and refusals that exit 3
 * having posted nothing. Processes run asynchronously: the forge serves from this process.
 */

const CLI = join(__dirname, '..', '..', 'dist', 'cli.js');
const execFileP = promisify(execFile);
const SCRIPT = readFileSync(join(__dirname, '..', 'fixtures', 'demo', 'script.json'), 'utf8');

describe('rennet review --pr, ask, post-review (built dist/cli.js) against the fake forge', function () {
  this.timeout(180_000);
  let forge: FakeForge;
  let src: TestRepo;
  let dir: string;
  let work: string;
  let env: NodeJS.ProcessEnv;

  async function rennet(args: string[], extra: NodeJS.ProcessEnv = {}) {
    try {
      const { stdout, stderr } = await execFileP(process.execPath, [CLI, ...args], { env: { ...env, ...extra }, encoding: 'utf8' });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code?: number; stdout?: string; stderr?: string };
      return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
    }
  }

  before(async () => {
    src = reviewRepo();
    forge = await startFakeForge();
    forge.addUser({ login: 'alice', token: 'alice-token' });
    forge.addUser({ login: 'bob', token: 'bob-token' });
    await forge.createRepo({ provider: 'github', owner: 'acme', name: 'uploads', from: src.dir, defaultBranch: 'main' });
    await forge.openPullRequest({ provider: 'github', owner: 'acme', name: 'uploads', author: 'alice', head: 'feature', base: 'main', title: 'Retry uploads', body: 'Uploads retry with back-off.' });
    dir = tempDir('rennet-forge-cli-');
    work = join(dir, 'work');
    await execFileP('git', ['clone', '--quiet', `${forge.url}/acme/uploads.git`, work], { env: isolatedCliEnv({}) });
    env = isolatedCliEnv({
      RENNET_DATA_DIR: join(dir, 'data'),
      RENNET_FORGES: JSON.stringify([{ host: new URL(forge.url).host, provider: 'github' }]),
      GITHUB_TOKEN: 'bob-token',
      RENNET_FORGE_CLI_TOKENS: '0',
    });
  });
  after(async () => {
    await forge.close();
    src.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('review --pr writes a report naming the request; ask stages; the dry run is what posts, once; refusals exit 3 and post nothing', async () => {
    const script = join(dir, 'script.json');
    writeFileSync(script, SCRIPT);
    const report = join(dir, 'report.json');
    const reviewed = await rennet(['review', '--repo', work, '--pr', '1', '--harness', `scripted:${script}`, '--json', report]);
    assert.equal(reviewed.code, 0, reviewed.stderr);
    const parsed = ReviewReport.parse(JSON.parse(readFileSync(report, 'utf8')));
    assert.deepEqual(parsed.target, { kind: 'pr', provider: 'github', owner: 'acme', repo: 'uploads', number: 1, headSha: src.head('feature'), baseSha: src.head('main') });
    assert.ok(
      parsed.boards.every((b) => b.state === 'settled'),
      JSON.stringify(parsed.boards.map((b) => [b.lens, b.state, b.failure])),
    );

    const ask = await rennet([
      'ask',
      '--repo',
      work,
      '--pr',
      '#1',
      '--intent',
      'request-change',
      '--path',
      'src/retry.ts',
      '--line',
      '6',
      '--end-line',
      '8',
      '--text',
      'Skip the wait after the last attempt.',
      '--json',
    ]);
    assert.equal(ask.code, 0, ask.stderr);
    const staged = JSON.parse(ask.stdout) as { ask: string; session: string };
    assert.match(staged.ask, /^ask-[0-9a-f]+$/);
    assert.match(staged.session, /^s-[0-9a-f]+$/);
    const general = await rennet(['ask', '--repo', work, '--pr', '1', '--intent', 'comment', '--text', 'The README reflow is unrelated; split it out?', '--json']);
    assert.equal(general.code, 0, general.stderr);
    const outside = await rennet(['ask', '--repo', work, '--pr', '1', '--intent', 'comment', '--path', 'src/upload.ts', '--line', '400', '--text', 'x']);
    assert.equal(outside.code, 3);
    assert.match(outside.stderr, /not inside one changed hunk/);

    const dry = await rennet(['post-review', '--repo', work, '--pr', '1', '--dry-run', '--json']);
    assert.equal(dry.code, 0, dry.stderr);
    const descriptor = ReviewDescriptor.parse(JSON.parse(dry.stdout));
    assert.equal(descriptor.event, 'REQUEST_CHANGES');
    assert.deepEqual(descriptor.target, { owner: 'acme', repo: 'uploads', number: 1, headSha: src.head('feature') });
    assert.deepEqual(
      descriptor.comments.map((c) => [c.path, c.side, c.startLine, c.line]),
      [['src/retry.ts', 'RIGHT', 6, 8]],
    );
    assert.equal(descriptor.folded.length, 1);
    assert.equal(forge.reviews({ provider: 'github', owner: 'acme', name: 'uploads', number: 1 }).length, 0, 'a dry run sends nothing');

    const wrong = await rennet(['post-review', '--repo', work, '--pr', '1', '--expect-composition', '0'.repeat(64), '--json']);
    assert.equal(wrong.code, 3);
    assert.match(wrong.stderr, /not the expected/);

    const post = await rennet(['post-review', '--repo', work, '--pr', '1', '--expect-composition', descriptor.compositionId, '--json']);
    assert.equal(post.code, 0, post.stderr);
    const receipt = JSON.parse(post.stdout) as { compositionId: string; url: string; reviewId: number; event: string; comments: number; reused: boolean };
    assert.deepEqual([receipt.compositionId, receipt.event, receipt.comments, receipt.reused], [descriptor.compositionId, 'REQUEST_CHANGES', 1, false]);
    const reviews = forge.reviews({ provider: 'github', owner: 'acme', name: 'uploads', number: 1 }) as Array<{ id: number; body: string; comments: Array<Record<string, unknown>> }>;
    assert.equal(reviews.length, 1);
    assert.equal(reviews[0]!.body, descriptor.body);
    assert.equal(reviews[0]!.id, receipt.reviewId);
    assert.equal(readReviewMarker(reviews[0]!.body), descriptor.compositionId.slice(0, 24));
    assert.deepEqual(
      reviews[0]!.comments.map((c) => [c.path, c.side, c.start_line, c.line, c.body]),
      descriptor.comments.map((c) => [c.path, c.side, c.startLine, c.line, c.body]),
    );

    const again = await rennet(['post-review', '--repo', work, '--pr', '1', '--json']);
    assert.equal(again.code, 0, again.stderr);
    assert.equal((JSON.parse(again.stdout) as { reviewId: number; reused: boolean }).reused, true);
    assert.equal(forge.reviews({ provider: 'github', owner: 'acme', name: 'uploads', number: 1 }).length, 1, 'the second post found the first');

    // A new ask, then the head moves on the forge: refused before anything is sent.
    assert.equal((await rennet(['ask', '--repo', work, '--pr', '1', '--intent', 'question', '--text', 'Why three attempts?'])).code, 0);
    await forge.movePullRequestHead({ provider: 'github', owner: 'acme', name: 'uploads', number: 1, sha: src.head('main') });
    const moved = await rennet(['post-review', '--repo', work, '--pr', '1', '--json']);
    assert.equal(moved.code, 3);
    assert.match(moved.stderr, /moved to [0-9a-f]{12} since it was captured/);
    const noToken = await rennet(['post-review', '--repo', work, '--pr', '1', '--json'], { GITHUB_TOKEN: '', GH_TOKEN: '' });
    assert.equal(noToken.code, 3);
    assert.match(noToken.stderr, /no GitHub credentials for .*set GITHUB_TOKEN/);
    assert.equal(forge.reviews({ provider: 'github', owner: 'acme', name: 'uploads', number: 1 }).length, 1);
  });

  it('open-pr: the dry run is what opens; the branch is pushed without writing an upstream; a second run reuses the request; a detached HEAD and an unregistered host exit 3', async () => {
    const clone = join(dir, 'own');
    const url = new URL(forge.url);
    await execFileP('git', ['clone', '--quiet', `${url.protocol}//alice:alice-token@${url.host}/acme/uploads.git`, clone], { env: isolatedCliEnv({}) });
    const git = (...args: string[]) =>
      execFileP('git', args, {
        cwd: clone,
        env: isolatedCliEnv({ GIT_AUTHOR_NAME: 'A', GIT_AUTHOR_EMAIL: 'a@example.com', GIT_COMMITTER_NAME: 'A', GIT_COMMITTER_EMAIL: 'a@example.com' }),
        encoding: 'utf8',
      });
    await git('checkout', '--quiet', '-b', 'feat/faster-retries');
    writeFileSync(join(clone, 'NOTES.md'), 'Retries back off faster.\n');
    await git('add', 'NOTES.md');
    await git('commit', '--quiet', '-m', 'Document the faster back-off');
    writeFileSync(join(clone, 'NOTES.md'), 'Retries back off faster, capped at 8 s.\n');
    await git('commit', '--quiet', '-am', 'Cap the back-off');
    const aliceEnv = { GITHUB_TOKEN: 'alice-token' };

    const dry = await rennet(['open-pr', '--repo', clone, '--dry-run', '--json'], aliceEnv);
    assert.equal(dry.code, 0, dry.stderr);
    const preview = JSON.parse(dry.stdout) as {
      compositionId: string;
      branch: string;
      base: string;
      title: string;
      body: string;
      existing: unknown;
      destination: { owner: string; repo: string; remote: string };
    };
    assert.deepEqual(
      [preview.branch, preview.base, preview.destination.owner, preview.destination.repo, preview.destination.remote, preview.existing],
      ['feat/faster-retries', 'main', 'acme', 'uploads', 'origin', null],
    );
    assert.equal(preview.title, 'Faster retries');
    assert.match(preview.body, /## Commits\n\n- Document the faster back-off \([0-9a-f]{7}\)\n- Cap the back-off/);
    assert.equal((await forge.pullRequests({ provider: 'github', owner: 'acme', name: 'uploads' })).length, 1, 'a dry run opens nothing');

    const opened = await rennet(['open-pr', '--repo', clone, '--expect-composition', preview.compositionId, '--json'], aliceEnv);
    assert.equal(opened.code, 0, opened.stderr);
    const result = JSON.parse(opened.stdout) as { url: string; number: number; reused: boolean; provider: string };
    assert.deepEqual([result.reused, result.provider], [false, 'github']);
    const pr = await forge.pullRequest({ provider: 'github', owner: 'acme', name: 'uploads', number: result.number });
    assert.equal((pr as { title: string }).title, preview.title);
    assert.equal((pr as { body: string }).body, preview.body);
    const local = (await git('rev-parse', 'feat/faster-retries')).stdout.trim();
    assert.equal((pr as { head: { sha: string } }).head.sha, local, 'the branch was pushed');
    const upstream = await git('config', '--get', 'branch.feat/faster-retries.remote').then(
      () => 'set',
      () => 'unset',
    );
    assert.equal(upstream, 'unset', 'no upstream was written');

    const again = await rennet(['open-pr', '--repo', clone, '--json'], aliceEnv);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(JSON.parse(again.stdout), { ...result, reused: true });

    await git('checkout', '--quiet', '--detach');
    const detached = await rennet(['open-pr', '--repo', clone, '--json'], aliceEnv);
    assert.equal(detached.code, 3);
    assert.match(detached.stderr, /HEAD is detached/);
    await git('checkout', '--quiet', 'feat/faster-retries');
    const stale = await rennet(['open-pr', '--repo', clone, '--title', 'Another title', '--expect-composition', preview.compositionId, '--json'], aliceEnv);
    assert.equal(stale.code, 3);
    assert.match(stale.stderr, /differ from the one previewed/);
    await git('remote', 'set-url', 'origin', 'https://forge.example.invalid/acme/uploads.git');
    const unknown = await rennet(['open-pr', '--repo', clone, '--json'], aliceEnv);
    assert.equal(unknown.code, 3);
    assert.match(unknown.stderr, /forge\.example\.invalid is not a registered forge/);
  });

  it("open-pr --harness: the Design harness reads the branch's review and writes the title and description; the same evidence reuses the stored text (no new turn), so Open submits what the dry run showed; a pass that hands in nothing leaves the draft, said", async () => {
    const clone = join(dir, 'polish');
    const url = new URL(forge.url);
    await execFileP('git', ['clone', '--quiet', `${url.protocol}//alice:alice-token@${url.host}/acme/uploads.git`, clone], { env: isolatedCliEnv({}) });
    const git = (...args: string[]) =>
      execFileP('git', args, {
        cwd: clone,
        env: isolatedCliEnv({ GIT_AUTHOR_NAME: 'A', GIT_AUTHOR_EMAIL: 'a@example.com', GIT_COMMITTER_NAME: 'A', GIT_COMMITTER_EMAIL: 'a@example.com' }),
        encoding: 'utf8',
      });
    await git('checkout', '--quiet', '-b', 'feat/jitter');
    const ADDED = 'Retries wait a random jitter of up to 250 ms on top of the back-off.';
    writeFileSync(join(clone, 'JITTER.md'), `${ADDED}\n`);
    await git('add', 'JITTER.md');
    await git('commit', '--quiet', '-m', 'Add jitter to retries');
    const aliceEnv = { GITHUB_TOKEN: 'alice-token' };
    // The branch's review: its capture is what the opener reads.
    const reviewed = await rennet(['review', '--repo', clone, '--base', 'main', '--json'], aliceEnv);
    assert.equal(reviewed.code, 0, reviewed.stderr);

    const TITLE = 'Add jitter on top of the retry back-off';
    const DESCRIPTION = `Retries now wait a random jitter of up to 250 ms on top of the back-off, so clients that failed together do not retry together.\n\nThe note is in JITTER.md:1.`;
    const opener = (body: Record<string, unknown>, raw: string) => (Array.isArray(body.tools) && body.tools.length > 0 && raw.includes('# Rennet: Design (pull request)') ? 'opener' : null);
    const model = await startOpenAiServer(
      {
        seats: {
          opener: [
            { toolCalls: [{ name: 'read_draft', input: {} }] },
            { toolCalls: [{ name: 'list_changes', input: {} }] },
            { toolCalls: [{ name: 'read_diff', input: { path: 'JITTER.md' } }] },
            { toolCalls: [{ name: 'set_title', input: { title: TITLE } }] },
            { toolCalls: [{ name: 'set_description', input: { markdown: DESCRIPTION } }] },
            { text: 'Done.' },
          ],
        },
      },
      { seatOf: opener },
    );
    try {
      const harness = ['--harness', 'openai', '--base-url', model.baseUrl, '--model', 'scripted-model'];
      const dry = await rennet(['open-pr', '--repo', clone, '--dry-run', '--json', ...harness], aliceEnv);
      assert.equal(dry.code, 0, dry.stderr);
      const preview = JSON.parse(dry.stdout) as {
        compositionId: string;
        title: string;
        body: string;
        sources: string[];
        polish: { state: string; harness?: string; model?: string; reused?: boolean };
      };
      assert.deepEqual([preview.title, preview.body], [TITLE, DESCRIPTION]);
      assert.deepEqual(preview.polish, { ...preview.polish, state: 'polished', harness: 'openai-compatible', model: 'scripted-model', reused: false });
      assert.ok(preview.sources.includes('model'), JSON.stringify(preview.sources));
      // It read before it wrote: the draft, the change list, and the diff with the added line as captured.
      const turns = model.requests.filter((r) => r.seat === 'opener');
      const results = turns.flatMap((r) => openAiToolResults(r.body ?? {}));
      const draftResult = results.find((r) => r.text.includes('"commits"'));
      assert.ok(draftResult?.text.includes('Add jitter to retries'), 'read_draft answered the commit subjects');
      assert.ok(
        results.some((r) => r.text.includes(ADDED) && /\+|added/.test(r.text)),
        `read_diff answered the added line: ${JSON.stringify(results.map((r) => r.text.slice(0, 120)))}`,
      );
      // Nothing of the branch is in the prompt: the draft and the change arrive as tool results only.
      const first = JSON.stringify((turns[0]?.body?.messages as unknown[] | undefined)?.slice(0, 2) ?? []);
      assert.ok(first.includes('# Rennet: Design (pull request)') && !first.includes('jitter') && !first.includes('Add jitter'), 'the first turn carries only the static prompt');

      const seen = model.requests.length;
      const again = await rennet(['open-pr', '--repo', clone, '--dry-run', '--json', ...harness], aliceEnv);
      assert.equal(again.code, 0, again.stderr);
      const reused = JSON.parse(again.stdout) as typeof preview;
      assert.equal(reused.compositionId, preview.compositionId, 'the same evidence composes the same request');
      assert.equal(reused.polish.reused, true);
      assert.equal(model.requests.length, seen, 'no new model turn for unchanged evidence');

      const opened = await rennet(['open-pr', '--repo', clone, '--expect-composition', preview.compositionId, '--json', ...harness], aliceEnv);
      assert.equal(opened.code, 0, opened.stderr);
      const pr = (await forge.pullRequest({ provider: 'github', owner: 'acme', name: 'uploads', number: (JSON.parse(opened.stdout) as { number: number }).number })) as { title: string; body: string };
      assert.deepEqual([pr.title, pr.body], [TITLE, DESCRIPTION]);
    } finally {
      await model.close();
    }

    // A new commit is new evidence; a pass that never hands in the description leaves the deterministic draft, and says why.
    writeFileSync(join(clone, 'JITTER.md'), `${ADDED}\nThe jitter is drawn per attempt.\n`);
    await git('commit', '--quiet', '-am', 'Draw the jitter per attempt');
    assert.equal((await rennet(['review', '--repo', clone, '--base', 'main', '--json'], aliceEnv)).code, 0);
    const lazy = await startOpenAiServer({ seats: { opener: [{ toolCalls: [{ name: 'set_title', input: { title: 'Half done' } }] }, { text: 'Done.' }] } }, { seatOf: opener });
    try {
      const dry = await rennet(['open-pr', '--repo', clone, '--dry-run', '--json', '--harness', 'openai', '--base-url', lazy.baseUrl, '--model', 'scripted-model'], aliceEnv);
      assert.equal(dry.code, 0, dry.stderr);
      const preview = JSON.parse(dry.stdout) as { title: string; body: string; polish: { state: string; message?: string } };
      assert.equal(preview.polish.state, 'failed');
      assert.match(preview.polish.message ?? '', /without set_description/);
      assert.equal(preview.title, 'Jitter', 'the deterministic title (the branch name: two commits)');
      assert.match(preview.body, /## Commits/);
    } finally {
      await lazy.close();
    }
  });

  it('GitLab: review --pr !1, ask and post-review land the review as discussions and one body note carrying the verdict label; open-pr opens a merge request', async () => {
    await forge.createRepo({ provider: 'gitlab', owner: 'grp', name: 'uploads', from: src.dir, defaultBranch: 'main' });
    await forge.openPullRequest({ provider: 'gitlab', owner: 'grp', name: 'uploads', author: 'alice', head: 'feature', base: 'main', title: 'Retry uploads', body: 'Uploads retry with back-off.' });
    const url = new URL(forge.url);
    const glWork = join(dir, 'gl-work');
    await execFileP('git', ['clone', '--quiet', `${url.protocol}//bob:bob-token@${url.host}/grp/uploads.git`, glWork], { env: isolatedCliEnv({}) });
    const gl = { RENNET_FORGES: JSON.stringify([{ host: url.host, provider: 'gitlab' }]), GITLAB_TOKEN: 'bob-token', RENNET_DATA_DIR: join(dir, 'gl-data') };
    const reviewed = await rennet(['review', '--repo', glWork, '--pr', '!1', '--json'], gl);
    assert.equal(reviewed.code, 0, reviewed.stderr);
    const ask = await rennet(
      ['ask', '--repo', glWork, '--pr', '1', '--intent', 'request-change', '--path', 'src/retry.ts', '--line', '6', '--end-line', '8', '--text', 'Skip the wait after the last attempt.', '--json'],
      gl,
    );
    assert.equal(ask.code, 0, ask.stderr);
    const dry = await rennet(['post-review', '--repo', glWork, '--pr', '1', '--dry-run', '--json'], gl);
    assert.equal(dry.code, 0, dry.stderr);
    const descriptor = ReviewDescriptor.parse(JSON.parse(dry.stdout));
    assert.equal(descriptor.provider, 'gitlab');
    assert.match(descriptor.body, /^\*\*Verdict: changes requested\*\*/);
    const post = await rennet(['post-review', '--repo', glWork, '--pr', '1', '--expect-composition', descriptor.compositionId, '--json'], gl);
    assert.equal(post.code, 0, post.stderr);
    const mr = { provider: 'gitlab' as const, owner: 'grp', name: 'uploads', number: 1 };
    const notes = forge.notes(mr) as Array<{ body: string; position?: unknown }>;
    assert.equal(notes.filter((n) => n.body === descriptor.body).length, 1, 'the body note is the dry run’s body, once');
    const discussions = forge.discussions(mr) as Array<{ notes: Array<{ body: string; position?: { new_line?: number; line_range?: unknown } | null }> }>;
    const positioned = discussions.flatMap((d) => d.notes).filter((n) => n.position);
    assert.deepEqual(
      positioned.map((n) => n.body),
      descriptor.comments.map((c) => c.body),
    );
    const again = await rennet(['post-review', '--repo', glWork, '--pr', '1', '--json'], gl);
    assert.equal(again.code, 0, again.stderr);
    assert.equal((JSON.parse(again.stdout) as { reused: boolean }).reused, true);
    assert.equal((forge.notes(mr) as Array<{ body: string }>).filter((n) => n.body === descriptor.body).length, 1);

    const git = (...args: string[]) =>
      execFileP('git', args, {
        cwd: glWork,
        env: isolatedCliEnv({ GIT_AUTHOR_NAME: 'B', GIT_AUTHOR_EMAIL: 'b@example.com', GIT_COMMITTER_NAME: 'B', GIT_COMMITTER_EMAIL: 'b@example.com' }),
        encoding: 'utf8',
      });
    await git('checkout', '--quiet', '-b', 'docs-retry');
    writeFileSync(join(glWork, 'RETRY.md'), 'How uploads retry.\n');
    await git('add', 'RETRY.md');
    await git('commit', '--quiet', '-m', 'Explain how uploads retry');
    const opened = await rennet(['open-pr', '--repo', glWork, '--json'], gl);
    assert.equal(opened.code, 0, opened.stderr);
    const o = JSON.parse(opened.stdout) as { number: number; reused: boolean; provider: string; url: string };
    assert.deepEqual([o.provider, o.reused], ['gitlab', false]);
    const created = (await forge.pullRequest({ provider: 'gitlab', owner: 'grp', name: 'uploads', number: o.number })) as { title: string; source_branch: string; target_branch: string };
    assert.deepEqual([created.title, created.source_branch, created.target_branch], ['Explain how uploads retry', 'docs-retry', 'main']);
  });
});

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { deltaManifest } from '../../host/rereview/closures';
import { checkAncestry, fixDelta } from '../../host/rereview/delta';
import { readReviewMarker } from '../../protocol/exits';
import { ReviewReport } from '../../protocol/review';
import { isolatedCliEnv, tempDir, type TestRepo } from '../fixtures/gitRepo';
import { startFakeForge, type FakeForge } from '../servers/fakeForge';
import type { Step } from '../servers/common';
import { seatOfPromptHeader } from '../servers/lensScripts';
import { openAiToolResults, startOpenAiServer, type ScriptedOpenAiServer } from '../servers/openai';
import { reviewRepo } from '../unit/review/fixtures';

/**
 * `rennet review --pr N --since-last-review` (built dist/cli.js, a separate process) against the
 * loopback fake forge and a scripted OpenAI server. The reviewer posts a Rennet review with an
 * inline change request at H1; the author pushes a fix (H2); the re-review measures the delta
 * H1→H2, its closure seat (the scripted server, prompt `# Rennet: prior items`) reads the items
 * and the delta, reads the fixed file, and resolves the request citing the ev- id it read; the
 * report carries `delta` and `priorItems`; the next post opens with "Prior review: 1 of 1
 * resolved", pinned to H2, once. A force push instead: not an ancestor, every item open. The base
 * merged into the request since the review: the lenses read only the author's work, and a Flagged
 * finding on a line the author did not change is kept only at blocker, the rest left out and said.
 *
 * The lens seats are not scripted (but the Flagged ones of the merged-base case): every other lens
 * request is answered "Nothing more to do." and those lanes fail. What is asserted is the
 * re-review's own part (its report fields, the closure seat's reads, the posted line, what the
 * Flagged seats read and kept), not the other boards.
 */

const CLI = join(__dirname, '..', '..', 'dist', 'cli.js');
const execFileP = promisify(execFile);
const PR = { provider: 'github' as const, owner: 'acme', name: 'uploads' };
const ASKED = 'Skip the wait after the last attempt.';
const WAIT = '      await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** attempt));';
const FIXED = '      if (attempt < times - 1) await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** attempt));';

describe('rennet review --since-last-review (built dist/cli.js) against the fake forge', function () {
  this.timeout(300_000);
  let forge: FakeForge;
  let src: TestRepo;
  let dir: string;
  /** The reviewer's (bob's) clone, and the author's (alice's). */
  let work: string;
  let author: string;
  let env: NodeJS.ProcessEnv;
  const servers: ScriptedOpenAiServer[] = [];

  async function rennet(args: string[]) {
    try {
      const { stdout, stderr } = await execFileP(process.execPath, [CLI, ...args], { env, encoding: 'utf8', maxBuffer: 32 * 1024 * 1024 });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code?: number; stdout?: string; stderr?: string };
      return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
    }
  }
  const authorGit = (...args: string[]) =>
    execFileP('git', args, {
      cwd: author,
      env: isolatedCliEnv({ GIT_AUTHOR_NAME: 'Alice', GIT_AUTHOR_EMAIL: 'alice@example.com', GIT_COMMITTER_NAME: 'Alice', GIT_COMMITTER_EMAIL: 'alice@example.com' }),
      encoding: 'utf8',
    }).then((r) => r.stdout.trim());
  const reviewsOf = (number: number) =>
    forge.reviews({ ...PR, number }) as Array<{ id: number; body: string; state: string; commit_id: string; user: { login: string }; comments: Array<Record<string, unknown>> }>;

  /** The closure seat's conversation: every request whose prompt is the closure seat's. */
  const closureSeat = (body: Record<string, unknown>, raw: string) => (Array.isArray(body.tools) && body.tools.length > 0 && raw.includes('# Rennet: prior items') ? 'closures' : null);
  async function modelServer(closures: Step[], lenses: Record<string, Step[]> = {}) {
    // The closure seat by its prompt; the lens seats by their production prompt headers (# Rennet: Flagged (compiler)).
    const seatOf = (body: Record<string, unknown>, raw: string) => closureSeat(body, raw) ?? (Array.isArray(body.tools) && body.tools.length > 0 ? seatOfPromptHeader(raw) : null);
    const server = await startOpenAiServer({ seats: { closures, ...lenses } }, { seatOf });
    servers.push(server);
    return server;
  }
  const harness = (server: ScriptedOpenAiServer) => ['--harness', 'openai', '--base-url', server.baseUrl, '--model', 'scripted-model'];

  /** Bob reviews request `number` at its head and posts one inline change request; answers the posted review. */
  async function firstReview(number: number, path: string, lineNo: number) {
    const opened = await rennet(['review', '--repo', work, '--pr', String(number), '--json']);
    assert.equal(opened.code, 0, opened.stderr);
    const ask = await rennet(['ask', '--repo', work, '--pr', String(number), '--intent', 'request-change', '--path', path, '--line', String(lineNo), '--text', ASKED, '--json']);
    assert.equal(ask.code, 0, ask.stderr);
    const post = await rennet(['post-review', '--repo', work, '--pr', String(number), '--json']);
    assert.equal(post.code, 0, post.stderr);
    const reviews = reviewsOf(number);
    assert.equal(reviews.length, 1);
    return reviews[0]!;
  }

  before(async () => {
    src = reviewRepo();
    forge = await startFakeForge();
    forge.addUser({ login: 'alice', token: 'alice-token' });
    forge.addUser({ login: 'bob', token: 'bob-token' });
    await forge.createRepo({ ...PR, from: src.dir, defaultBranch: 'main' });
    await forge.openPullRequest({ ...PR, author: 'alice', head: 'feature', base: 'main', title: 'Retry uploads', body: 'Uploads retry with back-off.' });
    dir = tempDir('rennet-rereview-cli-');
    work = join(dir, 'work');
    author = join(dir, 'author');
    const url = new URL(forge.url);
    await execFileP('git', ['clone', '--quiet', `${forge.url}/acme/uploads.git`, work], { env: isolatedCliEnv({}) });
    await execFileP('git', ['clone', '--quiet', `${url.protocol}//alice:alice-token@${url.host}/acme/uploads.git`, author], { env: isolatedCliEnv({}) });
    env = isolatedCliEnv({
      RENNET_DATA_DIR: join(dir, 'data'),
      RENNET_FORGES: JSON.stringify([{ host: url.host, provider: 'github' }]),
      GITHUB_TOKEN: 'bob-token',
      RENNET_FORGE_CLI_TOKENS: '0',
    });
  });
  after(async () => {
    for (const s of servers) await s.close();
    await forge.close();
    src.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a fix pushed after a posted review: the delta H1→H2, the closure seat reads and resolves the request on the fix’s line, and the next post opens with the line, pinned to H2, once', async () => {
    const H1 = src.head('feature');
    const first = await firstReview(1, 'src/retry.ts', 8);
    assert.deepEqual([first.state, first.commit_id, first.user.login], ['CHANGES_REQUESTED', H1, 'bob']);
    assert.deepEqual(
      first.comments.map((c) => [c['path'], c['line'], c['side'], c['body']]),
      [['src/retry.ts', 8, 'RIGHT', ASKED]],
    );

    // The author fixes line 8 and pushes to the request's branch.
    await authorGit('checkout', '--quiet', 'feature');
    const retry = readFileSync(join(author, 'src/retry.ts'), 'utf8');
    assert.equal(retry.split('\n')[7], WAIT);
    writeFileSync(join(author, 'src/retry.ts'), retry.replace(WAIT, FIXED));
    await authorGit('commit', '--quiet', '-am', 'Skip the wait after the last attempt');
    await authorGit('push', '--quiet', 'origin', 'feature');
    const H2 = await authorGit('rev-parse', 'HEAD');
    assert.equal(((await forge.pullRequest({ ...PR, number: 1 })) as { head: { sha: string } }).head.sha, H2, 'the push moved the request');

    // The oracle: the fix delta's units as git gives them, computed independently in the author's clone.
    const delta = await fixDelta(author, await checkAncestry(author, H1, H2));
    assert.ok(delta.ok && delta.value.kind === 'delta');
    const manifest = deltaManifest(delta.value.segments);
    assert.ok(manifest.ok);
    assert.equal(manifest.value.length, 1, JSON.stringify(manifest.value));
    const unit = manifest.value[0]!;
    assert.ok(unit.kind === 'text-hunk' && unit.path === 'src/retry.ts');

    const model = await modelServer([
      { toolCalls: [{ name: 'read_prior_items', input: { page: 1 } }] },
      { toolCalls: [{ name: 'read_diff', input: { path: 'src/retry.ts' } }] },
      {
        toolCalls: [{ name: 'submit_closures', input: { closures: [{ itemId: 'R1', closure: 'resolved', evidenceIds: [unit.id], reason: 'The wait now runs only when another attempt follows.' }] } }],
      },
      { text: 'Done.' },
    ]);
    const reportFile = join(dir, 'rereview.json');
    const rereviewed = await rennet(['review', '--repo', work, '--pr', '1', '--since-last-review', ...harness(model), '--json', reportFile]);
    assert.equal(rereviewed.code, 0, rereviewed.stderr);
    assert.ok(rereviewed.stderr.includes(`The delta since your review at ${H1.slice(0, 7)} is reviewed.\nPrior review: 1 of 1 resolved\n`), rereviewed.stderr);
    const report = ReviewReport.parse(JSON.parse(readFileSync(reportFile, 'utf8')));
    assert.deepEqual(report.delta, { kind: 'ancestor', from: H1, to: H2, reason: null });
    assert.equal(report.head, H2);
    assert.equal(report.base, H1, 'the lenses read the delta: its base is the reviewed commit');
    assert.deepEqual(report.target && [report.target.headSha, report.target.baseSha], [H2, src.head('main')]);
    assert.equal(report.priorItems?.length, 1, JSON.stringify(report.priorItems));
    const item = report.priorItems![0]!;
    assert.deepEqual(
      { ...item, evidence: item.evidence },
      {
        id: 'R1',
        path: 'src/retry.ts',
        line: 8,
        text: ASKED,
        severity: 'blocker',
        closure: 'resolved',
        reason: 'The wait now runs only when another attempt follows.',
        evidence: [{ path: 'src/retry.ts', side: 'head', line: 8 }],
      },
    );
    const atHead = (await authorGit('show', `${H2}:src/retry.ts`)).split('\n');
    assert.equal(atHead[item.evidence[0]!.line - 1], FIXED, 'the evidence is the fix’s added line at H2');

    // The closure seat read before it cited: the id was on the page it read, the fixed line in read_diff.
    const turns = model.requests.filter((r) => r.seat === 'closures');
    assert.equal(turns.length, 4, JSON.stringify(turns.map((t) => t.step)));
    const results = openAiToolResults(turns.at(-1)!.body ?? {});
    assert.equal(results.length, 3);
    assert.ok(results[0]!.text.includes(`"id":"${unit.id}"`) && results[0]!.text.includes('"items":[{"id":"R1"'), results[0]!.text);
    assert.ok(
      results[1]!.text.split('\n').some((l) => l.startsWith('+') && l.endsWith(FIXED.trimStart())),
      results[1]!.text,
    );
    assert.match(results[2]!.text, /^The closures are accepted: 1 of 1 items resolved/);
    const firstPrompt = JSON.stringify((turns[0]!.body?.messages as unknown[] | undefined) ?? []);
    assert.ok(!firstPrompt.includes(ASKED) && !firstPrompt.includes(H1), 'nothing of the request is in the prompt: the items arrive as tool results');

    // The next post: a new ask, then post-review — the body opens with the line, pinned to H2, with its own marker.
    const ask = await rennet(['ask', '--repo', work, '--pr', '1', '--intent', 'comment', '--text', 'Thanks, that reads right now.', '--json']);
    assert.equal(ask.code, 0, ask.stderr);
    const post = await rennet(['post-review', '--repo', work, '--pr', '1', '--json']);
    assert.equal(post.code, 0, post.stderr);
    const receipt = JSON.parse(post.stdout) as { reviewId: number; reused: boolean };
    assert.equal(receipt.reused, false);
    const reviews = reviewsOf(1);
    assert.equal(reviews.length, 2);
    const second = reviews[1]!;
    assert.equal(second.id, receipt.reviewId);
    assert.equal(second.body.split('\n')[0], 'Prior review: 1 of 1 resolved');
    assert.equal(second.commit_id, H2);
    assert.deepEqual([second.state, second.comments], ['COMMENTED', []], 'the posted request-change is not posted again');
    assert.ok(second.body.includes('**Comment**\n\nThanks, that reads right now.'), second.body);
    const marker = readReviewMarker(second.body);
    assert.ok(marker && marker !== readReviewMarker(first.body), 'a different composition, a different marker');

    const again = await rennet(['post-review', '--repo', work, '--pr', '1', '--json']);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(JSON.parse(again.stdout), { ...JSON.parse(post.stdout), reused: true });
    assert.equal(reviewsOf(1).length, 2, 'posting again found the posted review');

    // Re-reviewed again with nothing pushed since the second review: no lens and no seat runs; the items of the
    // second review (its note) stay open, and the line says there were no commits since.
    const idle = await modelServer([{ text: 'Nothing.' }]);
    const idleFile = join(dir, 'idle.json');
    const idleRun = await rennet(['review', '--repo', work, '--pr', '1', '--since-last-review', ...harness(idle), '--json', idleFile]);
    assert.equal(idleRun.code, 0, idleRun.stderr);
    assert.equal(idle.requests.length, 0, 'no model was asked anything');
    const idleReport = ReviewReport.parse(JSON.parse(readFileSync(idleFile, 'utf8')));
    assert.deepEqual(idleReport.delta, { kind: 'ancestor', from: H2, to: H2, reason: `no commits since ${H2.slice(0, 7)} - no code diff` });
    assert.deepEqual(idleReport.boards, []);
    assert.deepEqual(
      idleReport.priorItems?.map((i) => [i.id, i.closure, i.text, i.reason]),
      [['R1', 'open', '**Comment**\n\nThanks, that reads right now.', 'no commits since the earlier review: nothing can have resolved it']],
    );
    assert.ok(idleRun.stderr.includes(`Prior review: 0 of 1 resolved - no commits since ${H2.slice(0, 7)}`), idleRun.stderr);
  });

  it('a force push after a posted review: not an ancestor, the whole change is read, every item open; the closure seat is never asked', async () => {
    await authorGit('checkout', '--quiet', '-b', 'cache', 'origin/main');
    writeFileSync(join(author, 'src/cache.ts'), 'export const cache = new Map<string, Blob>();\nexport const TTL_MS = 60_000;\n');
    await authorGit('add', 'src/cache.ts');
    await authorGit('commit', '--quiet', '-m', 'Add an upload cache');
    await authorGit('push', '--quiet', 'origin', 'cache');
    const K1 = await authorGit('rev-parse', 'HEAD');
    const opened = await forge.openPullRequest({ ...PR, author: 'alice', head: 'cache', base: 'main', title: 'Cache uploads' });
    const number = opened.number;
    const first = await firstReview(number, 'src/cache.ts', 2);
    assert.equal(first.commit_id, K1);

    // The author rewrites the reviewed commit and force-pushes.
    writeFileSync(join(author, 'src/cache.ts'), 'export const cache = new Map<string, Blob>();\nexport const TTL_MS = 30_000;\n');
    await authorGit('commit', '--quiet', '--amend', '-am', 'Add an upload cache (shorter TTL)');
    await authorGit('push', '--quiet', '--force', 'origin', 'cache');
    const K2 = await authorGit('rev-parse', 'HEAD');
    assert.notEqual(K2, K1);

    const model = await modelServer([{ toolCalls: [{ name: 'read_prior_items', input: { page: 1 } }] }, { text: 'Done.' }]);
    const reportFile = join(dir, 'forced.json');
    const rereviewed = await rennet(['review', '--repo', work, '--pr', String(number), '--since-last-review', ...harness(model), '--json', reportFile]);
    assert.equal(rereviewed.code, 0, rereviewed.stderr);
    const report = ReviewReport.parse(JSON.parse(readFileSync(reportFile, 'utf8')));
    assert.deepEqual(report.delta, { kind: 'not-ancestor', from: K1, to: K2, reason: 'force push or rebase' });
    assert.deepEqual([report.base, report.head], [src.head('main'), K2], 'the lenses read the whole change');
    assert.deepEqual(
      report.priorItems?.map((i) => [i.id, i.path, i.line, i.closure, i.reason, i.evidence]),
      [['R1', 'src/cache.ts', 2, 'open', "the earlier review's commit is not an ancestor of the head (force push or rebase): there is no delta to show a fix", []]],
    );
    assert.ok(rereviewed.stderr.includes(`Prior review: baseline ${K1.slice(0, 7)} is not an ancestor of the head (force push or rebase), so the whole diff was reviewed`), rereviewed.stderr);
    assert.equal(model.requests.filter((r) => r.seat === 'closures').length, 0, 'no delta, no closure turn');
    // The reviewer's ask on the still-open item is staged again, so the next post asks it again.
    assert.match(rereviewed.stderr, /^Staged again \(their items are still open\): ask-/m);

    const post = await rennet(['post-review', '--repo', work, '--pr', String(number), '--json']);
    assert.equal(post.code, 0, post.stderr);
    const reviews = reviewsOf(number);
    assert.equal(reviews.length, 2);
    assert.equal(reviews[1]!.body.split('\n')[0], `Prior review: baseline ${K1.slice(0, 7)} is not an ancestor of the head (force push or rebase), so the whole diff was reviewed`);
    assert.equal(reviews[1]!.commit_id, K2);
    assert.ok(reviews[1]!.body.includes(ASKED), `the still-open ask is carried into the second review:\n${reviews[1]!.body}`);
  });
  it('the base merged into the request after a posted review: the lenses read only the author’s work; a Flagged finding on the base’s line is kept only at blocker, the other left out and said on the board', async () => {
    // The base gains src/limits.ts; the request changes its line 12 and is reviewed at L1.
    const LIMITS = Array.from({ length: 20 }, (_, i) => `export const L${i + 1} = ${i + 1};`).join('\n') + '\n';
    await authorGit('checkout', '--quiet', '-B', 'main', 'origin/main');
    writeFileSync(join(author, 'src/limits.ts'), LIMITS);
    await authorGit('add', 'src/limits.ts');
    await authorGit('commit', '--quiet', '-m', 'Add limits');
    await authorGit('push', '--quiet', 'origin', 'main');
    await authorGit('checkout', '--quiet', '-b', 'limits');
    writeFileSync(join(author, 'src/limits.ts'), LIMITS.replace('export const L12 = 12;', 'export const L12 = 1200;'));
    await authorGit('commit', '--quiet', '-am', 'Raise L12');
    await authorGit('push', '--quiet', 'origin', 'limits');
    const L1 = await authorGit('rev-parse', 'HEAD');
    const number = (await forge.openPullRequest({ ...PR, author: 'alice', head: 'limits', base: 'main', title: 'Raise limits' })).number;
    const first = await firstReview(number, 'src/limits.ts', 12);
    assert.equal(first.commit_id, L1);

    // The base moves (line 6 of the same file, and a file only it has); the author merges it in cleanly, then changes line 8.
    await authorGit('checkout', '--quiet', 'main');
    writeFileSync(join(author, 'src/limits.ts'), LIMITS.replace('export const L6 = 6;', 'export const L6 = 60;'));
    writeFileSync(join(author, 'src/base-only.ts'), 'export const ONLY_THE_BASE = true;\n');
    await authorGit('add', 'src/limits.ts', 'src/base-only.ts');
    await authorGit('commit', '--quiet', '-m', 'Main: L6, and a file of its own');
    await authorGit('push', '--quiet', 'origin', 'main');
    await authorGit('checkout', '--quiet', 'limits');
    await authorGit('merge', '--quiet', '--no-edit', 'main');
    const merged = readFileSync(join(author, 'src/limits.ts'), 'utf8');
    writeFileSync(join(author, 'src/limits.ts'), merged.replace('export const L8 = 8;', 'export const L8 = 80;'));
    await authorGit('commit', '--quiet', '-am', 'Raise L8');
    await authorGit('push', '--quiet', 'origin', 'limits');
    const L2 = await authorGit('rev-parse', 'HEAD');

    const finding = (severity: string, title: string, anchor: string) => ({
      toolCalls: [
        {
          name: 'add_finding',
          input: {
            severity,
            category: 'correctness',
            title,
            body_markdown: 'Callers read the wrong limit.',
            remedy_markdown: 'Read the limit from the config.',
            anchor: [anchor],
            parent_id: '$s',
            origin: 'other',
            agreement: 'solo',
            score: 70,
          },
        },
      ],
    });
    const model = await modelServer(
      [
        { toolCalls: [{ name: 'read_prior_items', input: { page: 1 } }] },
        { toolCalls: [{ name: 'submit_closures', input: { closures: [{ itemId: 'R1', closure: 'open', evidenceIds: [], reason: 'L12 was not touched since.' }] } }] },
        { text: 'Done.' },
      ],
      {
        'flagged:reviewer': [{ toolCalls: [{ name: 'submit_findings', input: { findings_markdown: '# Findings\n\n- src/limits.ts:6 and src/limits.ts:8 raise limits.\n' } }] }, { text: 'Done.' }],
        'flagged:compiler': [
          { toolCalls: [{ name: 'list_changes', input: {} }] },
          { toolCalls: [{ name: 'set_document', input: { title: 'What could go wrong', intro_markdown: 'Two limits read wrong.' } }] },
          { toolCalls: [{ name: 'add_section', input: { title: 'Limits', body_markdown: 'Where the limits are read.' }, as: 's' }] },
          { toolCalls: [{ name: 'cite', input: { path: 'src/limits.ts', side: 'head', start_line: 6, end_line: 6 }, as: 'six' }] },
          { toolCalls: [{ name: 'cite', input: { path: 'src/limits.ts', side: 'head', start_line: 8, end_line: 8 }, as: 'eight' }] },
          finding('major', 'L6 is too high', '$six'),
          finding('blocker', 'L6 overflows the buffer', '$six'),
          finding('minor', 'L8 is too high', '$eight'),
          { toolCalls: [{ name: 'finish', input: {} }] },
          { text: 'Done.' },
        ],
      },
    );
    const reportFile = join(dir, 'merged.json');
    const rereviewed = await rennet(['review', '--repo', work, '--pr', String(number), '--since-last-review', ...harness(model), '--json', reportFile]);
    assert.equal(rereviewed.code, 0, rereviewed.stderr);
    assert.ok(
      rereviewed.stderr.includes(`The delta since your review at ${L1.slice(0, 7)} is reviewed (inside 1 merge, only what was resolved there counts).\nPrior review: 0 of 1 resolved\n`),
      rereviewed.stderr,
    );
    const report = ReviewReport.parse(JSON.parse(readFileSync(reportFile, 'utf8')));
    assert.deepEqual(report.delta, { kind: 'ancestor', from: L1, to: L2, reason: null });
    assert.equal(report.head, L2);
    // The delta's base is the author base: written in the reviewer's clone on the reviewed commit.
    const workGit = (...args: string[]) => execFileP('git', args, { cwd: work, env: isolatedCliEnv({}), encoding: 'utf8' }).then((r) => r.stdout.trim());
    assert.notEqual(report.base, L1);
    assert.equal(await workGit('rev-parse', `${report.base}^`), L1);
    assert.equal(
      await workGit('show', `${report.base}:src/limits.ts`),
      LIMITS.replace('export const L6 = 6;', 'export const L6 = 60;').replace('export const L12 = 12;', 'export const L12 = 1200;').trimEnd(),
      'the author base: the reviewed L12 and the base’s L6, not the author’s L8',
    );
    assert.deepEqual(
      report.priorItems?.map((i) => [i.id, i.line, i.closure, i.reason]),
      [['R1', 12, 'open', 'L12 was not touched since.']],
    );

    // What the Flagged compiler read: only the author's file, one line changed (L8); nothing of the base's.
    const compiler = model.requests.filter((r) => r.seat === 'flagged:compiler');
    const listed = openAiToolResults(compiler[1]!.body ?? {})[0]!.text;
    assert.ok(listed.includes('src/limits.ts') && listed.includes('+1 −1'), listed);
    assert.ok(!listed.includes('base-only'), listed);

    // The board: the major on the base's line left out and said; the blocker there and the minor on L8 kept.
    const flagged = report.boards.find((b) => b.lens === 'flagged')!;
    assert.equal(flagged.state, 'settled', `${JSON.stringify(flagged.failure)}\n${rereviewed.stderr}`);
    const els = flagged.elements as Array<Record<string, unknown>>;
    assert.deepEqual(
      els.filter((e) => e['kind'] === 'finding').map((e) => [e['severity'], e['title']]),
      [
        ['blocker', 'L6 overflows the buffer'],
        ['minor', 'L8 is too high'],
      ],
    );
    assert.deepEqual(
      els.filter((e) => e['kind'] === 'callout' && e['author'] === 'host').map((e) => e['markdown']),
      [
        `1 finding outside the fix delta below blocker was left out: a re-review keeps a new finding on lines the author did not change since ${L1.slice(0, 7)} only when it is a blocker — “L6 is too high” (major; src/limits.ts:6).`,
      ],
    );
  });
});

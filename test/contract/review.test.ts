import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LENSES, LENS_TITLES } from '../../protocol/board';
import { ReviewReport } from '../../protocol/review';
import { isolatedCliEnv, TestRepo, tempDir } from '../fixtures/gitRepo';
import { reviewRepo } from '../unit/review/fixtures';

const CLI = join(__dirname, '..', '..', 'dist', 'cli.js');
const SPEC_FIXTURES = join(__dirname, '..', 'fixtures', 'specs');

function rennet(args: string[], dataDir: string, env: NodeJS.ProcessEnv = {}) {
  const result = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: isolatedCliEnv({ RENNET_DATA_DIR: dataDir, ...env }) });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * The demo script (test/fixtures/demo/script.json) writes a small board per lens on reviewRepo()'s
 * change: Sequence walks upload into retry, Decisions records the back-off, Flagged compiles one
 * review into a finding, Design drafts one requirement, and Noise groups the one placed member
 * (the README reflow, which no core lane cites).
 */
const SCRIPT = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'demo', 'script.json'), 'utf8')) as unknown;

describe('rennet review: lenses, JSON report and HTML page (built dist/cli.js)', function () {
  this.timeout(120_000);
  let repo: TestRepo;
  let dataDir: string;
  let out: string;
  beforeEach(() => {
    repo = reviewRepo();
    dataDir = tempDir('rennet-review-data-');
    out = tempDir('rennet-review-out-');
  });
  afterEach(() => {
    repo.cleanup();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(out, { recursive: true, force: true });
  });

  it('--harness scripted:FILE writes five boards to --json FILE and each board’s title to --html FILE', () => {
    const script = join(out, 'script.json');
    writeFileSync(script, JSON.stringify(SCRIPT, null, 2));
    const json = join(out, 'out.json');
    const html = join(out, 'out.html');
    const run = rennet(['review', '--repo', repo.dir, '--harness', `scripted:${script}`, '--json', json, '--html', html], dataDir);
    assert.equal(run.code, 0, run.stderr);

    const report = ReviewReport.parse(JSON.parse(readFileSync(json, 'utf8')));
    assert.deepEqual(
      report.boards.map((b) => b.lens),
      [...LENSES],
    );
    assert.deepEqual(
      report.boards.map((b) => b.state),
      ['settled', 'settled', 'settled', 'settled', 'settled'],
      JSON.stringify(report.boards.map((b) => b.failure)),
    );
    assert.equal(report.head, repo.head('feature'));
    assert.match(report.generation, /^g-[0-9a-f]{16}$/);
    const noise = report.boards[4]!;
    const group = noise.elements.find((e) => e.kind === 'noise_group')!;
    const members = noise.elements.filter((e) => e.kind === 'noise_member');
    assert.equal(members.length, 1);
    assert.deepEqual([members[0]!.parent, members[0]!.path], [group.id, 'README.md']);
    const ref = report.boards[1]!.elements.find((e) => e.kind === 'code_ref')!;
    assert.deepEqual([ref.path, ref.side, ref.startLine, ref.endLine], ['src/upload.ts', 'head', 1, 5]);
    assert.ok(report.spend.length >= 6, `one spend row per seat turn: ${JSON.stringify(report.spend)}`);
    for (const s of report.spend) assert.deepEqual([s.harness, s.model, s.inputTokens], ['scripted', null, null], 'the scripted harness is never a model');

    const page = readFileSync(html, 'utf8');
    for (const board of report.boards) assert.ok(page.includes(`>${board.document.title}</h2>`), board.document.title);
    for (const lens of LENSES) assert.ok(page.includes(`<span class="rail-title">${LENS_TITLES[lens]}</span>`));
    assert.doesNotMatch(page, /<script|https?:\/\//i);
    assert.ok(page.includes('<td class="tx">import { retry } from &#39;./retry&#39;;</td>'), 'the Sequence card shows the captured line');

    assert.match(run.stderr, /^ {2}sequence {3}working…$/m);
    assert.match(run.stderr, /^ {2}sequence {3}settled \(2 steps\)$/m);
    assert.match(run.stderr, /^ {2}noise {6}settled \(1 group, 1 changed region\)$/m);
    assert.match(run.stdout, /^Session s-[0-9a-f]+ \(new\)/m, 'the capture summary comes first, as before');
    assert.match(run.stdout, /^ {2}Sequence {3}settled {2}“How an upload travels” · 2 steps$/m);
    assert.match(run.stdout, /^ {2}Noise {6}settled {2}“Safe to skip” · 1 group, 1 changed region$/m);
    assert.ok(run.stdout.includes(`JSON report: ${json}`));
    assert.ok(run.stdout.includes(`HTML page:   ${html}`));
  });

  it('auto finds no model harness: every lane that needs one fails and says how to configure one; exit 0', () => {
    const json = join(out, 'auto.json');
    // rennet() spawns with isolatedCliEnv: no agent CLI is reachable, so auto finds none.
    const run = rennet(['review', '--repo', repo.dir, '--json', json], dataDir);
    assert.equal(run.code, 0, run.stderr);
    const report = ReviewReport.parse(JSON.parse(readFileSync(json, 'utf8')));
    assert.deepEqual(
      report.boards.map((b) => b.state),
      ['failed', 'failed', 'failed', 'failed', 'failed'],
    );
    for (const board of report.boards.slice(0, 4)) {
      assert.match(board.failure!.message, /no model harness is configured/);
      assert.match(board.failure!.message, /claude not found on PATH; codex not found on PATH/);
      assert.match(board.failure!.message, /scripted:FILE/);
      assert.equal(board.failure!.retryable, false);
    }
    assert.match(report.boards[4]!.failure!.message, /Noise cannot be derived/);
    assert.match(run.stdout, /^ {2}Flagged {4}failed {3}no model harness is configured/m);
    assert.match(run.stderr, /^ {2}flagged {4}failed: no model harness is configured/m);
  });

  it('auto on a specification-only change: Design settles from the specification, the others are absent (spec-only)', () => {
    const spec = new TestRepo();
    try {
      spec.write('src/app.ts', 'export const app = 1;\n').commit('base');
      spec.branch('feature');
      cpSync(join(SPEC_FIXTURES, 'openspec'), spec.dir, { recursive: true });
      spec.commit('spec');
      const json = join(out, 'spec.json');
      const html = join(out, 'spec.html');
      const run = rennet(['review', '--repo', spec.dir, '--json', json, '--html', html], dataDir);
      assert.equal(run.code, 0, run.stderr);
      const report = ReviewReport.parse(JSON.parse(readFileSync(json, 'utf8')));
      assert.deepEqual(
        report.boards.map((b) => [b.state, b.absence]),
        [
          ['settled', null],
          ['absent', 'spec-only'],
          ['absent', 'spec-only'],
          ['absent', 'spec-only'],
          ['absent', 'spec-only'],
        ],
      );
      assert.equal(report.boards[0]!.document.title, 'add-two-factor-auth');
      assert.equal(report.boards[0]!.document.proseRegister, 'transcribed');
      const page = readFileSync(html, 'utf8');
      assert.ok(page.includes('>add-two-factor-auth</h2>'));
      assert.ok(page.includes('Every changed path is a specification artifact'));
      assert.match(page, /<dt>WHEN<\/dt>/, 'the specification’s scenarios read as WHEN/THEN rows');
    } finally {
      spec.cleanup();
    }
  });

  it('--json without FILE keeps printing the session and runs no lenses', () => {
    const run = rennet(['review', '--repo', repo.dir, '--json'], dataDir);
    assert.equal(run.code, 0, run.stderr);
    const json = JSON.parse(run.stdout) as { snapshot: { session: { id: string } } };
    assert.match(json.snapshot.session.id, /^s-/);
    assert.equal(run.stderr, '');
  });

  it('bad input exits non-zero with the reason and writes nothing', () => {
    const json = join(out, 'never.json');
    const cases: Array<[string[], RegExp, number]> = [
      [['review', '--repo', repo.dir, '--harness', 'gpt-7', '--json', json], /unknown harness "gpt-7" \(one of auto, claude-code, codex, openai, anthropic, vscode-lm, scripted:<file>, none\)/, 2],
      [['review', '--repo', repo.dir, '--harness', 'scripted', '--json', json], /needs a script file/, 2],
      [['review', '--repo', repo.dir, '--harness', `scripted:${join(out, 'missing.json')}`, '--json', json], /cannot read the harness script .*missing\.json: ENOENT/, 1],
      [['review', '--repo', repo.dir, '--json', '--html', join(out, 'x.html')], /--json without FILE prints the session/, 2],
      [['review', '--repo', repo.dir, '--json', join(out, 'no-dir', 'r.json')], /the directory .*no-dir does not exist/, 1],
      [['review', '--repo', repo.dir, '--html', out], /is a directory; name a file/, 1],
      [['capture', '--repo', repo.dir, '--base', 'main', '--head', 'feature', '--html', join(out, 'x.html')], /--html is not an option of capture/, 2],
      [['capture', '--repo', repo.dir, '--base', 'main', '--head', 'feature', '--harness', 'auto'], /--harness is not an option of capture/, 2],
    ];
    writeFileSync(join(out, 'bad.json'), '{"seats": {"sequence:drafter": {"turns": "no"}}}');
    cases.push([['review', '--repo', repo.dir, '--harness', `scripted:${join(out, 'bad.json')}`], /bad\.json is not a harness script/, 1]);
    for (const [args, message, code] of cases) {
      const run = rennet(args, dataDir);
      assert.equal(run.code, code, `${args.join(' ')}\n${run.stderr}`);
      assert.match(run.stderr, message, args.join(' '));
      assert.equal(run.stdout, '', `${args.join(' ')}: nothing captured or printed`);
    }
    assert.ok(!existsSync(json));
    assert.ok(!existsSync(join(out, 'x.html')));
  });

  it('a bare repository is captured, but the lenses need a work tree: refused with the reason', () => {
    const bare = tempDir('rennet-review-bare-');
    try {
      execFileSync('git', ['clone', '-q', '--bare', repo.dir, bare]);
      const run = rennet(['review', '--repo', bare, '--base', 'main', '--head', 'feature', '--json', join(out, 'bare.json')], dataDir);
      assert.equal(run.code, 1, run.stderr);
      assert.match(run.stdout, /^Session s-[0-9a-f]+ \(new\)/m);
      assert.match(run.stderr, /the lenses run in a work tree, and .* has none \(a bare repository\?\); review a checkout of it/);
      assert.ok(!existsSync(join(out, 'bare.json')));
    } finally {
      rmSync(bare, { recursive: true, force: true });
    }
  });

  it('the usage text documents the review flags', () => {
    const run = rennet(['--help'], dataDir);
    assert.equal(run.code, 0);
    assert.match(run.stdout, /\[--harness NAME \[--base-url URL\] \[--model NAME\]\] \[--json FILE\] \[--html FILE\]/);
    for (const name of ['claude-code', 'codex', 'openai', 'anthropic', 'none', 'scripted:FILE', 'vscode-lm']) assert.ok(run.stdout.includes(name), `usage names ${name}`);
    assert.match(run.stdout, /--json FILE {10}review: write the review report to FILE/);
  });
});

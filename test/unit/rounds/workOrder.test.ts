import assert from 'node:assert/strict';
import { Patchset } from '../../../protocol/patchset';
import { composeWorkOrder, diffFence, discoverCheckCommand, dispatchRefusal, roundAsks } from '../../../host/rounds/workOrder';
import { Asks, captureFixture, finding, line, span } from '../exits/fixtures';
import type { TestRepo } from '../../fixtures/gitRepo';

/**
 * The work order over a real capture (test/unit/exits/fixtures.ts): which asks a round takes, the
 * three depth-blind refusals, the order's grouping and verbatim text, the diff fences taken from
 * the capture, its digest, and the check command found from the repository's own files.
 */
describe('host/rounds/workOrder: what a round is asked to do', () => {
  let repo: TestRepo;
  let patchset: Patchset;
  before(async () => {
    ({ repo, patchset } = await captureFixture());
  });
  after(() => repo.cleanup());

  it('refuses in exactly three shapes, none of which counts rounds', () => {
    const empty = new Asks().projection();
    assert.equal(dispatchRefusal('teammate', empty), 'no-round-lane');
    assert.equal(dispatchRefusal('retrospective', empty), 'no-round-lane');
    assert.equal(dispatchRefusal('own', empty), 'nothing-staged');
    const questions = new Asks();
    questions.ask(line(patchset, 'src/a.ts', 'head', 10), 'Why ten?', 'question', 'changes');
    questions.ask({ kind: 'none' }, 'Looks good.', 'approval', 'changes');
    assert.equal(dispatchRefusal('own', questions.projection()), 'no-coding-asks');
    questions.ask(line(patchset, 'src/a.ts', 'head', 10), 'Spell it as a digit.', 'request-change', 'changes');
    assert.equal(dispatchRefusal('own', questions.projection()), null);
    assert.equal(dispatchRefusal('teammate', questions.projection()), 'no-round-lane', 'a coding ask on a teammate’s request still has no round');
    // Asks of the posted-review lane and retired asks are not round work.
    const elsewhere = new Asks();
    elsewhere.ask(line(patchset, 'src/a.ts', 'head', 10), 'Post this.', 'request-change', 'post-review');
    const retired = elsewhere.ask(line(patchset, 'src/a.ts', 'head', 10), 'Done already.', 'request-change', 'changes');
    elsewhere.retire(retired);
    assert.equal(dispatchRefusal('own', elsewhere.projection()), 'nothing-staged');
    assert.deepEqual(
      roundAsks(questions.projection()).coding.map((a) => a.text),
      ['Spell it as a digit.'],
    );
  });

  it('orders asks on code by file and line, then file-level, then board prose, then general; keeps every text verbatim; fences the captured lines', () => {
    const asks = new Asks();
    const general = asks.ask({ kind: 'none' }, 'Add a changelog entry.\n\nMention the rename.', 'comment', 'changes');
    const prose = asks.ask({ kind: 'quote', generationId: 'g-1', lens: 'design', elementId: 'e-1', quote: 'The client owns retries' }, 'Move retries to the server.', 'request-change', 'changes');
    const wide = asks.ask(line(patchset, 'wide.ts', 'head', 20), 'Say twenty as a digit.', 'request-change', 'changes');
    const earlier = asks.ask({ kind: 'line', path: 'src/a.ts', side: 'head', startLine: 10, endLine: 10, patchsetId: 'ps-earlier000000000' }, 'This was on an earlier capture.', 'comment', 'changes');
    const flagged = asks.ask(finding('f-1', span(patchset, 'src/a.ts', 'head', 31)), 'Remove the stray line (```inline fence```).', 'request-change', 'changes');
    const a10 = asks.ask(line(patchset, 'src/a.ts', 'head', 10), 'Use a digit here.', 'comment', 'changes');
    asks.ask(line(patchset, 'src/a.ts', 'head', 10), 'Why ten?', 'question', 'changes');
    const order = composeWorkOrder({ branch: 'feature', patchset, projection: asks.projection(), checkCommand: null });
    assert.deepEqual(
      order.asks.map((a) => a.id),
      [a10, flagged, wide, earlier, prose, general],
      'code by path and line, file-level, prose, general; the question is not work',
    );
    const md = order.markdown;
    const at = (needle: string) => {
      const i = md.indexOf(needle);
      assert.ok(i >= 0, `the order does not contain ${JSON.stringify(needle)}`);
      return i;
    };
    assert.ok(at('## Asks on the code') < at('### 1. Comment · `src/a.ts` line 10 (new side)') && at('### 1.') < at('### 2. Change request · `src/a.ts` line 31 (new side), a Flagged finding'));
    assert.ok(at('## Asks about a file (written on an earlier capture)') < at('### 4. Comment · `src/a.ts` · ask'));
    assert.ok(at('## Asks about the review’s boards') < at('### 5. Change request · the Design board'));
    assert.ok(at('## Asks about the change as a whole') < at('### 6. Comment · no file'));
    assert.ok(md.includes('> Add a changelog entry.\n>\n> Mention the rename.'), 'a multi-line ask stays one quote, blank line included');
    assert.ok(!md.includes('Why ten?'));
    // The line-10 ask is fenced with its hunk exactly as captured.
    const hunk = patchset.files.find((f) => f.path === 'src/a.ts')!.hunks[0]!;
    assert.ok(md.includes(`\`\`\`diff\n${hunk.header}\n`) && md.includes('-line 10\n+line ten\n'), 'the captured hunk is fenced');
    // A fence is longer than any backtick run in what it holds; the flagged ask's text is quoted as written.
    assert.ok(md.includes('> Remove the stray line (```inline fence```).'));
    // No check command: nothing is said about one.
    assert.doesNotMatch(md, /\brun `/i);
    assert.match(order.digest, /^[0-9a-f]{64}$/);
    assert.deepEqual(
      order.reportAsks.map((r) => [r.id, r.path, r.anchor?.startLine ?? null]),
      [
        [a10, 'src/a.ts', 10],
        [flagged, 'src/a.ts', 31],
        [wide, 'wide.ts', 20],
        [earlier, 'src/a.ts', null],
        [prose, null, null],
        [general, null, null],
      ],
    );
  });

  it('the digest is the order’s: the same asks compose the same bytes; an edit, a new ask or a check command changes it', () => {
    const asks = new Asks();
    const id = asks.ask(line(patchset, 'src/a.ts', 'head', 10), 'Use a digit here.', 'comment', 'changes');
    const one = composeWorkOrder({ branch: 'feature', patchset, projection: asks.projection(), checkCommand: null });
    assert.equal(composeWorkOrder({ branch: 'feature', patchset, projection: asks.projection(), checkCommand: null }).digest, one.digest);
    const withCheck = composeWorkOrder({ branch: 'feature', patchset, projection: asks.projection(), checkCommand: { command: 'npm test', source: 'package.json "test" script' } });
    assert.notEqual(withCheck.digest, one.digest);
    assert.match(withCheck.markdown, /Run `npm test` \(this repository's check, from its package\.json "test" script\) before committing\. If it fails/);
    asks.edit(id, 'Use the digit 10 here.');
    assert.notEqual(composeWorkOrder({ branch: 'feature', patchset, projection: asks.projection(), checkCommand: null }).digest, one.digest);
  });

  it('a diff fence covers exactly the hunks the span touches, on its side', () => {
    const twoHunks = diffFence(patchset, span(patchset, 'wide.ts', 'head', 10, 20));
    assert.ok(twoHunks && (twoHunks.match(/^@@ /gm) ?? []).length === 2, twoHunks ?? 'no fence');
    const base = diffFence(patchset, span(patchset, 'gone.ts', 'base', 2));
    assert.ok(base?.includes('-g 2'), base ?? 'no fence');
    assert.equal(diffFence(patchset, span(patchset, 'img.bin', 'head', 1)), null, 'a binary file has no lines');
    assert.equal(diffFence(patchset, span(patchset, 'src/a.ts', 'head', 20)), null, 'a line outside every hunk has no fence');
  });

  it('finds the repository’s check command from its own files, or none', () => {
    assert.deepEqual(discoverCheckCommand({ packageJson: JSON.stringify({ scripts: { test: 'mocha' } }) }), { command: 'npm test', source: 'package.json "test" script' });
    assert.equal(discoverCheckCommand({ packageJson: JSON.stringify({ scripts: { test: 'mocha' } }), lockFiles: ['pnpm-lock.yaml'] })?.command, 'pnpm test');
    assert.equal(discoverCheckCommand({ packageJson: JSON.stringify({ scripts: { test: 'echo "Error: no test specified" && exit 1' } }) }), null, 'npm init’s placeholder is no check');
    assert.equal(discoverCheckCommand({ packageJson: '{not json', makefile: 'build:\n\tcc\ntest: build\n\t./t\n' })?.command, 'make test');
    assert.equal(discoverCheckCommand({ makefile: 'build:\n\tcc\n' }), null);
    assert.equal(discoverCheckCommand({ cargoToml: true })?.command, 'cargo test');
    assert.equal(discoverCheckCommand({ goMod: true })?.command, 'go test ./...');
    assert.equal(discoverCheckCommand({ pyprojectToml: '[tool.pytest.ini_options]\naddopts = "-q"\n' })?.command, 'pytest');
    assert.equal(discoverCheckCommand({ setupCfg: '[tool:pytest]\n' })?.command, 'pytest');
    assert.equal(discoverCheckCommand({ pyprojectToml: '[project]\nname = "x"\n' }), null);
    assert.equal(discoverCheckCommand({}), null);
  });
});

import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { normalizeJsonFlag } from '../../../host/review/args';
import { checkOutputPath, progressLine, ReviewRefusal, runReview, type ReviewRunDeps } from '../../../host/review/command';
import { HarnessChoiceError, HarnessLoadError, loadHarnessAssignment, parseHarnessChoice } from '../../../host/harness/harnessChoice';
import { scriptedAssignment, type HarnessScript } from '../../../host/harness/scripted';
import type { DiscoveredLocalServer } from '../../../host/harness/discover';
import { writeContextDir, writeNoiseOffer, type ContextDirInput } from '../../../host/pipeline/contextDir';
import { newGenerationId, runLensPipeline } from '../../../host/pipeline/run';
import type { GenerationOutcome, HarnessAssignment, LensPipelineInput, LensPipelineSeams } from '../../../host/pipeline/types';
import { LENSES } from '../../../protocol/board';
import type { Patchset } from '../../../protocol/patchset';
import { ReviewReport } from '../../../protocol/review';
import { TestRepo, tempDir } from '../../fixtures/gitRepo';
import {
  T0,
  captureBranch,
  compileTurn,
  openStore,
  sessionFor,
  decisionsTurn,
  designTurn,
  lines,
  noiseTurn,
  regionsOf,
  reviewTurn,
  sequenceTurn,
  testPrompts,
  tickingClock,
  type Region,
} from '../pipeline/fixtures';
import { reviewFixture, settledOutcome, type ReviewFixture } from './fixtures';
import { ROUND_EVENT_KINDS } from '../../../host/rounds/ledger';

const LOCAL_DOWN: DiscoveredLocalServer[] = [
  { kind: 'ollama', label: 'Ollama', baseUrl: 'http://127.0.0.1:11434', status: 'not-running', detail: 'connection refused', models: [], omitted: 0 },
  { kind: 'lm-studio', label: 'LM Studio', baseUrl: 'http://127.0.0.1:1234', status: 'not-running', detail: 'connection refused', models: [], omitted: 0 },
];
const NO_HARNESS: HarnessAssignment = { design: null, sequence: null, decisions: null, noise: null, flagged: { reviewers: [], compiler: null } };

describe('rennet review: the run after the capture (fake pipeline)', function () {
  this.timeout(30_000);
  let fx: ReviewFixture;
  let dir: string;
  before(async () => {
    fx = await reviewFixture();
  });
  after(() => fx.repo.cleanup());
  beforeEach(() => {
    dir = tempDir('rennet-review-out-');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function deps(out: { stdout: string[]; stderr: string[]; inputs: LensPipelineInput[]; contexts: ContextDirInput[] }): ReviewRunDeps {
    return {
      async runPipeline(input: LensPipelineInput, seams: LensPipelineSeams): Promise<GenerationOutcome> {
        out.inputs.push(input);
        const outcome = settledOutcome(fx);
        for (const lane of outcome.lanes) await seams.onLane?.({ generation: input.generationId, lens: lane.lens, state: 'working', absence: null, failure: null });
        for (const lane of outcome.lanes) {
          seams.onFrame?.({ generation: input.generationId, lens: lane.lens, revision: 1, kind: 'closed', touched: [], board: lane.board });
          await seams.onLane?.({ generation: input.generationId, lens: lane.lens, state: 'settled', absence: null, failure: null });
        }
        return {
          generationId: input.generationId,
          sessionId: input.sessionId,
          patchsetId: input.patchset.id,
          specOnly: false,
          lanes: outcome.lanes.map((l) => ({ ...l, attempts: 1, reconstructed: false })),
          spend: [...outcome.spend],
          timings: [...outcome.timings],
        };
      },
      async writeContextDir(input) {
        out.contexts.push(input);
        return { dir: join(dir, 'ctx'), relative: `.rennet/context/${input.sessionId}`, files: ['README.md'] };
      },
      async writeNoiseOffer(input) {
        return { dir: join(dir, 'ctx'), relative: `.rennet/context/${input.sessionId}`, files: ['README.md', 'noise-offer.json'] };
      },
      prompts: { seatPrompt: () => 'prompt', followUpPrompt: () => 'again' },
      clock: { now: () => new Date('2026-01-01T00:00:00Z') },
      stdout: (t) => out.stdout.push(t),
      stderr: (t) => out.stderr.push(t),
      newGenerationId: () => 'g-00000000000000aa',
    };
  }

  it('runs the pipeline, streams lane progress, prints each board and writes the JSON report and the HTML page', async () => {
    const out = { stdout: [] as string[], stderr: [] as string[], inputs: [] as LensPipelineInput[], contexts: [] as ContextDirInput[] };
    const json = join(dir, 'review.json');
    const html = join(dir, 'review.html');
    const report = await runReview({ patchset: fx.patchset, sessionId: 's-1', workspace: fx.repo.dir, harnesses: NO_HARNESS, jsonFile: json, htmlFile: html, store: null }, deps(out));
    assert.equal(out.inputs.length, 1);
    assert.equal(out.inputs[0]!.generationId, 'g-00000000000000aa');
    assert.equal(out.inputs[0]!.contextDir, '.rennet/context/s-1');
    assert.equal(out.inputs[0]!.workspaceDir, fx.repo.dir);
    assert.equal(out.contexts[0]!.designSources, null, 'no design assembler given: no design sources');
    const progress = out.stderr.join('');
    assert.match(progress, /^ {2}sequence {3}working…$/m);
    assert.match(progress, /^ {2}sequence {3}settled \(2 steps\)$/m);
    assert.match(progress, /^ {2}noise {6}settled \(1 group, 1 changed region\)$/m);
    const summary = out.stdout.join('');
    assert.match(summary, /^Review g-00000000000000aa · patchset ps-/m);
    assert.match(summary, /^ {2}Flagged {4}settled {2}“What could go wrong” · 1 finding$/m);
    assert.match(summary, new RegExp(`^JSON report: ${json.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
    const written = ReviewReport.parse(JSON.parse(readFileSync(json, 'utf8')));
    assert.deepEqual(written, report);
    assert.deepEqual(
      written.boards.map((b) => b.lens),
      [...LENSES],
    );
    const page = readFileSync(html, 'utf8');
    for (const board of written.boards) assert.ok(page.includes(board.document.title), board.document.title);
  });

  it('writes the Design sources into the context directory from the one assembly the pipeline also gets', async () => {
    const out = { stdout: [] as string[], stderr: [] as string[], inputs: [] as LensPipelineInput[], contexts: [] as ContextDirInput[] };
    let designSeam: LensPipelineSeams['design'] = undefined;
    const base = deps(out);
    await runReview(
      { patchset: fx.patchset, sessionId: 's-2', workspace: fx.repo.dir, harnesses: NO_HARNESS, jsonFile: null, htmlFile: null, store: null },
      {
        ...base,
        assembleDesign: async () => ({ kind: 'fallback', format: 'openspec', sources: ['openspec/changes/x/proposal.md'], rule: 'spec-empty', reason: 'nothing read' }),
        runPipeline: (input, seams) => {
          designSeam = seams.design;
          return base.runPipeline(input, seams);
        },
      },
    );
    assert.deepEqual(out.contexts[0]!.designSources, { format: 'OpenSpec', paths: ['openspec/changes/x/proposal.md'] });
    assert.equal(typeof designSeam, 'function');
    assert.deepEqual(await (designSeam as unknown as (p: unknown) => unknown)(fx.patchset), {
      kind: 'fallback',
      format: 'openspec',
      sources: ['openspec/changes/x/proposal.md'],
      rule: 'spec-empty',
      reason: 'nothing read',
    });
  });

  it('refuses an output path it cannot write before running anything', async () => {
    const out = { stdout: [] as string[], stderr: [] as string[], inputs: [] as LensPipelineInput[], contexts: [] as ContextDirInput[] };
    await assert.rejects(
      runReview({ patchset: fx.patchset, sessionId: 's-3', workspace: fx.repo.dir, harnesses: NO_HARNESS, jsonFile: join(dir, 'missing', 'r.json'), htmlFile: null, store: null }, deps(out)),
      (error: unknown) => error instanceof ReviewRefusal && /the directory .*missing does not exist/.test(error.message),
    );
    assert.throws(() => checkOutputPath(dir, '--html'), /is a directory; name a file/);
    assert.equal(out.inputs.length, 0, 'the pipeline never ran');
  });

  it('a context directory that cannot be written is a refusal, not a crash', async () => {
    const out = { stdout: [] as string[], stderr: [] as string[], inputs: [] as LensPipelineInput[], contexts: [] as ContextDirInput[] };
    const bare = { ...deps(out), writeContextDir: async () => Promise.reject(new Error('git rev-parse failed (128): fatal: this operation must be run in a work tree')) };
    await assert.rejects(
      runReview({ patchset: fx.patchset, sessionId: 's-4', workspace: '/bare', harnesses: NO_HARNESS, jsonFile: null, htmlFile: null, store: null }, bare),
      (error: unknown) => error instanceof ReviewRefusal && /the lenses run in a work tree, and \/bare has none/.test(error.message),
    );
    const full = { ...deps(out), writeContextDir: async () => Promise.reject(new Error('EACCES: permission denied')) };
    await assert.rejects(
      runReview({ patchset: fx.patchset, sessionId: 's-4', workspace: '/ro', harnesses: NO_HARNESS, jsonFile: null, htmlFile: null, store: null }, full),
      /cannot prepare the seats' context directory in \/ro: EACCES: permission denied/,
    );
    assert.equal(out.inputs.length, 0);
  });

  it("resumes the session's interrupted generation of this capture (resumePipeline, the same id, its round report again); else draws a new one", async () => {
    const store = await openStore(join(dir, 'store'));
    try {
      const sessionId = sessionFor(store, fx.repo, fx.patchset);
      const id = 'g-00000000000000b1';
      store.createGeneration({ id, sessionId, patchsetId: fx.patchset.id, now: T0 });
      store.putLaneOutcome({ generationId: id, lens: 'design', state: 'settled', absence: null, failure: null, attempts: 0, now: T0 });
      // The generation is a round's successor: its report goes back into the context directory.
      const report = {
        roundId: 'r-1',
        successorPatchsetId: fx.patchset.id,
        outcomes: [{ askId: 'ask-1', askText: 'Say retry once.', outcome: 'untouched' as const, evidence: [], note: 'not done' }],
        beyond: [],
        counts: { addressed: 0, partial: 0, untouched: 1, beyond: 0 },
      };
      store.appendEvent(
        sessionId,
        ROUND_EVENT_KINDS.started,
        {
          round: 'r-1',
          ordinal: 2,
          asks: ['ask-1'],
          workOrderDigest: 'd',
          worker: { kind: 'scripted', version: null },
          workspace: { root: fx.repo.dir, branch: 'feature' },
          fromPatchsetId: fx.patchset.id,
          fromGenerationId: null,
          startedAt: T0,
        },
        T0,
      );
      store.appendEvent(sessionId, ROUND_EVENT_KINDS.reported, { round: 'r-1', report, harness: 'scripted', model: null }, T0);
      store.appendEvent(sessionId, ROUND_EVENT_KINDS.generation, { round: 'r-1', generationId: id }, T0);

      const out = { stdout: [] as string[], stderr: [] as string[], inputs: [] as LensPipelineInput[], contexts: [] as ContextDirInput[] };
      const base = deps(out);
      const resumed: string[] = [];
      const withResume: ReviewRunDeps = { ...base, resumePipeline: (input, seams) => (resumed.push(input.generationId), base.runPipeline(input, seams)) };
      const options = { patchset: fx.patchset, sessionId, workspace: fx.repo.dir, harnesses: NO_HARNESS, jsonFile: null, htmlFile: null, store };
      const first = await runReview(options, withResume);
      assert.deepEqual(resumed, [id]);
      assert.equal(first.generation, id);
      assert.match(out.stderr.join(''), /^Generation g-00000000000000b1: resuming the lenses interrupted earlier \(kept: design; drafting: sequence, decisions, flagged, noise\)$/m);
      assert.deepEqual(out.contexts[0]!.roundReport, { ordinal: 2, report, asks: [{ id: 'ask-1', text: 'Say retry once.' }] });

      // Without resumePipeline nothing resumes.
      const plain = { stdout: [] as string[], stderr: [] as string[], inputs: [] as LensPipelineInput[], contexts: [] as ContextDirInput[] };
      assert.equal((await runReview(options, deps(plain))).generation, 'g-00000000000000aa');
      // Every lane settled: a new generation, announced as a run.
      for (const lens of ['sequence', 'decisions', 'flagged', 'noise'] as const) store.putLaneOutcome({ generationId: id, lens, state: 'settled', absence: null, failure: null, attempts: 1, now: T0 });
      out.stderr.length = 0;
      const second = await runReview(options, withResume);
      assert.deepEqual(resumed, [id], 'not resumed again');
      assert.equal(second.generation, 'g-00000000000000aa');
      assert.match(out.stderr.join(''), /^Generation g-00000000000000aa: running the lenses$/m);
      assert.equal(out.contexts[1]!.roundReport, undefined, "a new generation of the capture is no round's");
    } finally {
      store.close();
    }
  });

  it('progress lines name the state, the counts, the absence or the failure and its ladder', () => {
    assert.equal(progressLine({ lens: 'decisions', state: 'queued', absence: null, failure: null }), '  decisions  queued\n');
    assert.equal(progressLine({ lens: 'noise', state: 'waiting', absence: null, failure: null }), '  noise      waiting…\n');
    assert.equal(progressLine({ lens: 'flagged', state: 'absent', absence: 'no-findings', failure: null }), '  flagged    absent (no-findings)\n');
    assert.equal(
      progressLine({ lens: 'sequence', state: 'failed', absence: null, failure: { message: 'no model harness is configured:\nSequence needs a drafter.', retryable: false, attempts: 0 } }),
      '  sequence   failed: no model harness is configured: Sequence needs a drafter. (terminal)\n',
    );
    assert.equal(progressLine({ lens: 'design', state: 'settled', absence: null, failure: null }, fx.boards.design), '  design     settled (1 requirement, 1 scenario, 2 tasks, 1 stat)\n');
  });
});

describe('rennet review: --harness', () => {
  let dir: string;
  beforeEach(() => {
    dir = tempDir('rennet-harness-');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('parses every harness name; a bad name or a missing companion flag is a usage error', () => {
    assert.deepEqual(parseHarnessChoice(undefined), { kind: 'auto' });
    assert.deepEqual(parseHarnessChoice('auto'), { kind: 'auto' });
    assert.deepEqual(parseHarnessChoice('none'), { kind: 'none' });
    assert.deepEqual(parseHarnessChoice('claude-code'), { kind: 'claude-code' });
    assert.deepEqual(parseHarnessChoice('codex', { model: 'gpt-5' }), { kind: 'codex' });
    assert.deepEqual(parseHarnessChoice('scripted:/tmp/s.json'), { kind: 'scripted', file: '/tmp/s.json' });
    assert.deepEqual(parseHarnessChoice('openai', { baseUrl: 'http://127.0.0.1:9/v1', model: 'm' }, {}), { kind: 'openai', baseUrl: 'http://127.0.0.1:9/v1', model: 'm', apiKey: undefined });
    assert.deepEqual(parseHarnessChoice('anthropic', { model: 'm' }, { ANTHROPIC_API_KEY: 'k' }), { kind: 'anthropic', baseUrl: 'https://api.anthropic.com', model: 'm', apiKey: 'k' });
    const usage = (fn: () => unknown, pattern: RegExp) => assert.throws(fn, (e: unknown) => e instanceof HarnessChoiceError && pattern.test((e as Error).message));
    usage(() => parseHarnessChoice('scripted'), /needs a script file/);
    usage(() => parseHarnessChoice('gpt-7'), /unknown harness "gpt-7" \(one of auto, claude-code, codex, openai, anthropic, vscode-lm, scripted:<file>, none\)/);
    usage(() => parseHarnessChoice('openai', { baseUrl: 'http://127.0.0.1:9/v1' }), /needs --model NAME/);
    usage(() => parseHarnessChoice('openai', { model: 'm' }, {}), /needs OPENAI_API_KEY/);
    usage(() => parseHarnessChoice('anthropic', { baseUrl: 'ftp://x', model: 'm' }, {}), /not an http\(s\) URL/);
    usage(() => parseHarnessChoice('auto', { baseUrl: 'http://127.0.0.1:9' }), /--base-url applies to --harness openai or anthropic only/);
    usage(() => parseHarnessChoice('vscode-lm'), /runs inside VS Code/);
  });

  it('auto uses the installed CLIs (one reviewer each) and, with none, says how to configure one', async () => {
    // No local model server either (the real loopback ports are never asked here).
    const down = async () => LOCAL_DOWN;
    const missing = async () => [
      { kind: 'claude-code' as const, bin: 'claude', version: null, available: false, reason: 'claude not found on PATH' },
      { kind: 'codex' as const, bin: 'codex', version: null, available: false, reason: 'codex not found on PATH' },
    ];
    const auto = await loadHarnessAssignment({ kind: 'auto' }, {}, { discover: missing, discoverLocal: down });
    assert.deepEqual({ ...auto, missingHint: undefined }, { ...NO_HARNESS, missingHint: undefined });
    assert.match(auto.missingHint ?? '', /claude not found on PATH; codex not found on PATH/);
    assert.match(auto.missingHint ?? '', /Ollama \(http:\/\/127\.0\.0\.1:11434\) not running \(connection refused\); LM Studio \(http:\/\/127\.0\.0\.1:1234\) not running/);
    assert.match(auto.missingHint ?? '', /run Ollama or LM Studio here with a tool-capable model/);
    assert.match(auto.missingHint ?? '', /--harness openai\|anthropic/);
    const both = async () => [
      { kind: 'claude-code' as const, bin: '/opt/claude', version: '2.1.197', available: true, reason: null },
      { kind: 'codex' as const, bin: '/opt/codex', version: '0.171.0', available: true, reason: null },
    ];
    const dual = await loadHarnessAssignment({ kind: 'auto' }, {}, { discover: both, discoverLocal: down });
    assert.equal(dual.sequence?.kind, 'claude-code');
    assert.deepEqual(
      dual.flagged.reviewers.map((h) => h.kind),
      ['claude-code', 'codex'],
      'two providers review independently',
    );
    await assert.rejects(loadHarnessAssignment({ kind: 'codex' }, {}, { discover: missing }), (e: unknown) => e instanceof HarnessLoadError && /codex not found on PATH/.test((e as Error).message));
    const none = await loadHarnessAssignment({ kind: 'none' });
    assert.equal(none.sequence, null);
    assert.match(none.missingHint ?? '', /--harness none was chosen/);
  });

  it('scripted: reads the script now; an unreadable or malformed one is refused with the reason', async () => {
    await assert.rejects(
      loadHarnessAssignment({ kind: 'scripted', file: join(dir, 'none.json') }),
      (e: unknown) => e instanceof HarnessLoadError && /cannot read the harness script .*none\.json: ENOENT/.test((e as Error).message),
    );
    writeFileSync(join(dir, 'bad.json'), '{"seats": ');
    await assert.rejects(
      loadHarnessAssignment({ kind: 'scripted', file: join(dir, 'bad.json') }),
      (e: unknown) => e instanceof HarnessLoadError && /bad\.json is not a harness script/.test((e as Error).message),
    );
    writeFileSync(join(dir, 'wrong.json'), '{"seats": {"sequence:drafter": {"turns": [{"nope": 1}]}}}');
    await assert.rejects(loadHarnessAssignment({ kind: 'scripted', file: join(dir, 'wrong.json') }), HarnessLoadError);
    mkdirSync(join(dir, 'adir'));
    await assert.rejects(loadHarnessAssignment({ kind: 'scripted', file: join(dir, 'adir') }), /EISDIR/);
    writeFileSync(join(dir, 'ok.json'), JSON.stringify({ seats: { 'sequence:drafter': { turns: [[{ tool: 'finish' }]] } } }));
    const scripted = await loadHarnessAssignment({ kind: 'scripted', file: join(dir, 'ok.json') });
    assert.equal(scripted.sequence?.kind, 'scripted');
    assert.equal(scripted.design, null, 'a lens the script does not play gets no harness');
    assert.match(scripted.missingHint ?? '', /ok\.json has no seat for it/);
  });
});

describe('rennet review: --json with an optional FILE', () => {
  const VALUE = new Set(['repo', 'base', 'head', 'harness', 'html', 'json', 'store', 'lens', 'author', 'max-file-bytes']);
  const norm = (args: string) => normalizeJsonFlag(args.split(' '), VALUE);

  it('takes the next token as the report file on review, when it is not an option', () => {
    assert.deepEqual(norm('review --repo r --json out.json'), ['review', '--repo', 'r', '--json=out.json']);
    assert.deepEqual(norm('review --json out.json --repo r'), ['review', '--json=out.json', '--repo', 'r']);
    assert.deepEqual(norm('review --repo r --json=out.json'), ['review', '--repo', 'r', '--json=out.json']);
  });

  it('keeps the flag form everywhere else', () => {
    assert.deepEqual(norm('review --repo r --json'), ['review', '--repo', 'r', '--json=']);
    assert.deepEqual(norm('review --json --repo r'), ['review', '--json=', '--repo', 'r']);
    assert.deepEqual(norm('capture --repo r --base main --head f --json'), ['capture', '--repo', 'r', '--base', 'main', '--head', 'f', '--json=']);
    assert.deepEqual(norm('capture --json x'), ['capture', '--json=', 'x'], 'a stray token stays a positional, which capture refuses');
    assert.deepEqual(norm('tools --lens flagged --json'), ['tools', '--lens', 'flagged', '--json=']);
    assert.deepEqual(norm('--json review --repo r'), ['--json=', 'review', '--repo', 'r'], 'before the command it is the flag');
  });

  it('does not mistake an option value for the command, and leaves everything after -- alone', () => {
    assert.deepEqual(norm('--repo review capture --json x'), ['--repo', 'review', 'capture', '--json=', 'x']);
    assert.deepEqual(norm('review -- --json x'), ['review', '--', '--json', 'x']);
  });
});

describe('rennet review over a real pipeline: a changed file whose name holds a line break', function () {
  this.timeout(60_000);
  const ODD = 'a\nb.txt';
  let repo: TestRepo;
  let patchset: Patchset;
  // a\nb.txt, docs/notes.md, src/app.ts (two hunks), src/util.ts — in patchset order.
  let odd: Region, notes: Region, app1: Region, app2: Region, util: Region;

  before(async () => {
    repo = new TestRepo();
    repo.write(ODD, lines(5, 'odd')).write('src/app.ts', lines(40)).write('src/util.ts', lines(20, 'util')).write('docs/notes.md', lines(8, 'note')).commit('base');
    repo
      .branch('feature')
      .write(ODD, lines(5, 'odd').replace('odd 3\n', 'ODD 3\n'))
      .write('src/app.ts', lines(40).replace('line 10\n', 'line ten\n').replace('line 30\n', 'line thirty\n'))
      .write('src/util.ts', lines(20, 'util').replace('util 5\n', 'UTIL 5\n'))
      .write('docs/notes.md', lines(8, 'note').replace('note 3\n', 'NOTE 3\n'))
      .commit('change');
    patchset = await captureBranch(repo);
    [odd, notes, app1, app2, util] = regionsOf(patchset) as [Region, Region, Region, Region, Region];
    assert.deepEqual([odd.path, notes.path, app1.path, app2.path, util.path], [ODD, 'docs/notes.md', 'src/app.ts', 'src/app.ts', 'src/util.ts']);
  });
  after(() => repo?.cleanup());

  /** Every core lane cites code elsewhere, so Noise is offered the odd file's hunk and the notes hunk. */
  const script = (): HarnessScript => ({
    seats: {
      'design:drafter': { turns: [designTurn()] },
      'sequence:drafter': { turns: [sequenceTurn([app1])] },
      'decisions:drafter': { turns: [decisionsTurn([app2])] },
      'flagged:reviewer:claude': { turns: [reviewTurn()] },
      'flagged:compiler': { turns: [compileTurn([util], [{ origin: 'claude', agreement: 'solo', title: 'Callers match the old text' }])] },
      'noise:drafter': { turns: [noiseTurn(2)] },
    },
  });

  function realDeps(extra: Partial<ReviewRunDeps> = {}): { deps: ReviewRunDeps; stderr: string[] } {
    const stderr: string[] = [];
    return {
      stderr,
      deps: {
        runPipeline: runLensPipeline,
        writeContextDir,
        writeNoiseOffer,
        prompts: testPrompts,
        clock: tickingClock(),
        stdout: () => undefined,
        stderr: (t) => stderr.push(t),
        newGenerationId,
        ...extra,
      },
    };
  }

  const run = (sessionId: string, deps: ReviewRunDeps) =>
    runReview({ patchset, sessionId, workspace: repo.dir, harnesses: scriptedAssignment(script()), jsonFile: null, htmlFile: null, store: null }, deps);
  const contextFile = (sessionId: string, name: string) => readFileSync(join(repo.dir, '.rennet', 'context', sessionId, name), 'utf8');

  it('the Noise lane settles, and its offer names the file by index and escaped path', async () => {
    const { deps, stderr } = realDeps();
    const report = await run('s-odd-noise', deps);
    const noise = report.boards.find((b) => b.lens === 'noise')!;
    assert.equal(noise.state, 'settled', `${JSON.stringify(noise.failure)}\n${stderr.join('')}`);
    for (const board of report.boards) assert.equal(board.state, 'settled', board.lens);
    assert.deepEqual(JSON.parse(contextFile('s-odd-noise', 'noise-offer.json')), [
      { member_id: 'e1', path: null, path_escaped: 'a\\nb.txt', file_index: 0, side: 'head', start_line: odd.start, end_line: odd.end },
      { member_id: 'e2', path: 'docs/notes.md', side: 'head', start_line: notes.start, end_line: notes.end },
    ]);
  });

  it('a design source with that name neither refuses the run nor fails a lane: design-sources.md lists it by index', async () => {
    const { deps, stderr } = realDeps({
      assembleDesign: async () => ({ kind: 'fallback', format: 'openspec', sources: [ODD, 'docs/notes.md'], rule: 'spec-empty', reason: 'nothing read' }),
    });
    const report = await run('s-odd-design', deps);
    for (const board of report.boards) assert.equal(board.state, 'settled', `${board.lens}: ${JSON.stringify(board.failure)}\n${stderr.join('')}`);
    const sources = contextFile('s-odd-design', 'design-sources.md');
    assert.ok(sources.split('\n').includes('- (file 1 of the change; its path cannot be written on one line: "a\\nb.txt")'), sources);
    assert.ok(sources.split('\n').includes('- docs/notes.md'), sources);
  });
});

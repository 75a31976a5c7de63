import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { scriptedAssignment } from '../../../host/harness/scripted';
import type { Harness } from '../../../host/pipeline/ports';
import type { GenerationOutcome, HarnessAssignment } from '../../../host/pipeline/types';
import { claimedPipeline, resumableGeneration, roundReportOfGeneration } from '../../../host/review/resume';
import { LensRunner } from '../../../host/review/runner';
import { reviewDeps } from '../../../host/review/seams';
import { ROUND_EVENT_KINDS } from '../../../host/rounds/ledger';
import { ReviewService } from '../../../host/service';
import { claimGenerationRun, generationRunHolder, type Store } from '../../../host/store';
import { runClaimPath } from '../../../host/store/runClaims';
import { LENSES, type Lens } from '../../../protocol/board';
import type { Patchset } from '../../../protocol/patchset';
import { applyGenerationDelta } from '../../../protocol/generationDelta';
import type { GenerationSnapshot, HarnessConfig } from '../../../protocol/review';
import type { RoundReport } from '../../../protocol/rounds';
import type { TestRepo } from '../../fixtures/gitRepo';
import { Gate, T0, Temp, codeChange, fullScriptFor, openStore, sessionFor, until } from '../pipeline/fixtures';

/**
 * host/review/resume.ts over a real store: when a lens run resumes the session's interrupted
 * generation (and when it draws a new one), the run claims that keep two live processes off one
 * generation, and the VS Code host's LensRunner resuming a round's successor with its round report.
 */

const NONE: HarnessAssignment = { design: null, sequence: null, decisions: null, noise: null, flagged: { reviewers: [], compiler: null } };

/** A real process that is gone: its pid is dead on this host. */
function deadPid(): number {
  const done = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(done.stdout);
}

describe('review/resume: which generation a lens run resumes, and run claims', function () {
  this.timeout(30_000);
  const temp = new Temp();
  let repo: TestRepo;
  let patchset: Patchset;
  const open: Store[] = [];
  const children: ChildProcess[] = [];
  before(async () => {
    ({ repo, patchset } = await codeChange());
  });
  after(() => {
    for (const s of open.splice(0)) s.close();
    for (const c of children.splice(0)) c.kill('SIGKILL');
    repo?.cleanup();
    temp.cleanup();
  });

  async function filed(outcomes: Partial<Record<Lens, 'settled' | 'retryable' | 'terminal' | 'no-harness'>>, id = 'g-00000000000000a1') {
    const store = await openStore(temp);
    open.push(store);
    const sessionId = sessionFor(store, repo, patchset);
    store.createGeneration({ id, sessionId, patchsetId: patchset.id, now: T0 });
    for (const [lens, kind] of Object.entries(outcomes) as Array<[Lens, string]>) {
      const failure =
        kind === 'settled'
          ? null
          : kind === 'no-harness'
            ? { message: 'no model harness is configured: Sequence needs a drafter.', retryable: false, attempts: 0 }
            : { message: `${lens} broke`, retryable: kind === 'retryable', attempts: 2 };
      store.putLaneOutcome({ generationId: id, lens, state: failure ? 'failed' : 'settled', absence: null, failure, attempts: 1, now: T0 });
    }
    return { store, sessionId, id };
  }

  it('resumes a live generation of this capture with an unsettled lane, keeping what settled (Noise is redrafted with any core lane)', async () => {
    const { store, sessionId, id } = await filed({ design: 'settled', decisions: 'settled', flagged: 'terminal', sequence: 'retryable' });
    const decision = resumableGeneration(store, sessionId, patchset.id, NONE);
    assert.deepEqual(decision, { plan: { generationId: id, kept: ['design', 'decisions', 'flagged'], redrafted: ['sequence', 'noise'] } });
  });

  it('draws a new generation when there is nothing to resume: none, all settled, frozen, another capture, a lane that now has a harness', async () => {
    const empty = await openStore(temp);
    open.push(empty);
    assert.equal(resumableGeneration(empty, sessionFor(empty, repo, patchset), patchset.id, NONE).plan, null);

    const all = await filed(Object.fromEntries(LENSES.map((l) => [l, 'settled'])));
    assert.match((resumableGeneration(all.store, all.sessionId, patchset.id, NONE) as { why: string }).why, /every lane of generation .* settled/);

    const other = await filed({ design: 'settled' });
    assert.match((resumableGeneration(other.store, other.sessionId, 'ps-another', NONE) as { why: string }).why, /reads patchset .*, not ps-another/);

    const frozen = await filed({ design: 'settled' });
    frozen.store.freezeGeneration(frozen.id, T0);
    assert.match((resumableGeneration(frozen.store, frozen.sessionId, patchset.id, NONE) as { why: string }).why, /is frozen/);

    // Sequence failed for want of a drafter: with one now, a new generation draws it; still without one, the rest resumes.
    const wanting = await filed({ design: 'settled', sequence: 'no-harness' });
    const withSequence: HarnessAssignment = { ...NONE, sequence: scriptedAssignment(fullScriptFor(patchset)).sequence };
    assert.match((resumableGeneration(wanting.store, wanting.sessionId, patchset.id, withSequence) as { why: string }).why, /the sequence lane .* had no model harness, and this run has one/);
    assert.deepEqual(resumableGeneration(wanting.store, wanting.sessionId, patchset.id, NONE).plan?.kept, ['design', 'sequence']);
  });

  it('never resumes a generation a live process holds; a dead holder does not count', async () => {
    const { store, sessionId, id } = await filed({ design: 'settled' });
    const file = runClaimPath(store.dir, id);
    mkdirSync(join(store.dir, 'runs'), { recursive: true });

    const alive = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    children.push(alive);
    writeFileSync(file, `${alive.pid} ${hostname()} 0123456789abcdef\n`);
    assert.deepEqual(generationRunHolder(store.dir, id), { pid: alive.pid, host: hostname() });
    assert.match((resumableGeneration(store, sessionId, patchset.id, NONE) as { why: string }).why, new RegExp(`being drafted by process ${alive.pid} on `));
    const refused = claimGenerationRun(store.dir, id);
    assert.ok(!refused.ok && refused.holder.pid === alive.pid, 'a live holder keeps its claim');

    // Another host's claim is never judged stale.
    writeFileSync(file, `${deadPid()} elsewhere.example 0123456789abcdef\n`);
    assert.equal(claimGenerationRun(store.dir, id).ok, false);

    writeFileSync(file, `${deadPid()} ${hostname()} 0123456789abcdef\n`);
    assert.equal(generationRunHolder(store.dir, id), null);
    assert.equal(resumableGeneration(store, sessionId, patchset.id, NONE).plan?.generationId, id);
    const taken = claimGenerationRun(store.dir, id);
    assert.ok(taken.ok, 'a dead holder is broken');
    assert.match(readFileSync(file, 'utf8'), new RegExp(`^${process.pid} `));
    assert.deepEqual(generationRunHolder(store.dir, id), { pid: process.pid, host: hostname() }, 'this process holds it');
    assert.equal(claimGenerationRun(store.dir, id).ok, false, 'one claim at a time, in this process too');
    taken.claim.release();
    assert.ok(!existsSync(file));

    // A claim file with our pid that this process does not hold is a leftover of an earlier process.
    writeFileSync(file, `${process.pid} ${hostname()} 0123456789abcdef\n`);
    assert.equal(generationRunHolder(store.dir, id), null);
    // An empty claim is a creator mid-write for 2 s, then stale.
    writeFileSync(file, '');
    assert.equal(claimGenerationRun(store.dir, id).ok, false);
    const old = new Date(Date.now() - 5_000);
    utimesSync(file, old, old);
    const again = claimGenerationRun(store.dir, id);
    assert.ok(again.ok);
    again.claim.release();
    alive.kill('SIGKILL');
  });

  it('claimedPipeline holds the claim while the run is in flight and releases it however it ends', async () => {
    const { store, id } = await filed({});
    const file = runClaimPath(store.dir, id);
    let seen = '';
    const ok = claimedPipeline(async () => {
      seen = readFileSync(file, 'utf8');
      return {} as GenerationOutcome;
    });
    await ok({ generationId: id } as never, { store } as never);
    assert.match(seen, new RegExp(`^${process.pid} `));
    assert.ok(!existsSync(file), 'released after success');
    const broken = claimedPipeline(async () => Promise.reject(new Error('the pipeline broke')));
    await assert.rejects(broken({ generationId: id } as never, { store } as never), /the pipeline broke/);
    assert.ok(!existsSync(file), 'released after a failure');
    const held = claimGenerationRun(store.dir, id);
    assert.ok(held.ok);
    let ran = false;
    const refused = claimedPipeline(async () => {
      ran = true;
      return {} as GenerationOutcome;
    });
    await assert.rejects(refused({ generationId: id } as never, { store } as never), new RegExp(`generation ${id} is being drafted by process ${process.pid}`));
    assert.equal(ran, false);
    held.claim.release();
  });
});

describe('LensRunner: an interrupted round successor is resumed by runLenses, with its round report', function () {
  this.timeout(60_000);
  const temp = new Temp();
  let repo: TestRepo;
  let patchset: Patchset;
  const open: Store[] = [];
  before(async () => {
    ({ repo, patchset } = await codeChange());
  });
  after(() => {
    for (const s of open.splice(0)) s.close();
    repo?.cleanup();
    temp.cleanup();
  });

  const CONFIG: HarnessConfig = { default: 'none', lenses: {}, vscodeLm: {}, openai: {}, anthropic: {} };

  /** `pushes`: the generation after each push, whole ones as sent and deltas folded on the one before (a delta that does not apply is logged). */
  function runnerOver(store: Store, service: ReviewService, assignment: HarnessAssignment, logs: string[], pushes: GenerationSnapshot[]): LensRunner {
    return new LensRunner({
      store,
      service,
      runDeps: (workspace) => reviewDeps(workspace, { stdout: () => undefined, stderr: () => undefined }),
      assign: async () => assignment,
      publish: (s) => pushes.push(s),
      publishDelta: (d) => {
        const applied = applyGenerationDelta(pushes.at(-1) ?? null, d);
        if (applied.ok) pushes.push(applied.snapshot);
        else logs.push(`a delta did not apply: ${applied.message}`);
      },
      log: (_level, message) => logs.push(message),
      intervalMs: 5,
    });
  }

  it('the settled lanes are kept with no turn, Sequence and Noise are drafted, round-report.md is written again', async () => {
    const store = await openStore(temp);
    open.push(store);
    const service = new ReviewService({ store });
    const opened = await service.openReview({ repo: repo.dir, target: { kind: 'branch', head: 'feature', base: 'main' } });
    assert.ok(opened.ok, opened.ok ? '' : opened.error.message);
    const sessionId = opened.value.snapshot.session.id;
    assert.equal(opened.value.snapshot.patchset?.id, patchset.id);

    // The first host: a round's successor drafted with its report; Sequence held, then the host goes away.
    const askText = 'Rename the parser "line ten" case.';
    const report: RoundReport = {
      roundId: 'r-0000000000000001',
      successorPatchsetId: patchset.id,
      outcomes: [{ askId: 'ask-0000000000000001', askText, outcome: 'untouched', evidence: [], note: 'The worker did not get to it.' }],
      beyond: [],
      counts: { addressed: 0, partial: 0, untouched: 1, beyond: 0 },
    };
    const base1 = scriptedAssignment(fullScriptFor(patchset));
    const gates: Gate[] = [];
    const gate = (h: Harness | null) => {
      if (!h) return null;
      const g = new Gate(h, (seat) => seat === 'sequence:drafter');
      gates.push(g);
      return g;
    };
    const held: HarnessAssignment = {
      design: gate(base1.design),
      sequence: gate(base1.sequence),
      decisions: gate(base1.decisions),
      noise: gate(base1.noise),
      flagged: { reviewers: base1.flagged.reviewers.map((h) => gate(h) as Harness), compiler: gate(base1.flagged.compiler) },
    };
    const logs1: string[] = [];
    const first = runnerOver(store, service, held, logs1, []);
    const started = await first.runRoundLenses(sessionId, CONFIG, { ordinal: 1, report, asks: [{ id: 'ask-0000000000000001', text: askText }] });
    assert.ok(started.ok, started.ok ? '' : started.error.message);
    const generationId = started.value.generationId;
    const receipt = (kind: string, payload: unknown) => store.appendEvent(sessionId, kind, payload, T0);
    receipt(ROUND_EVENT_KINDS.started, {
      round: report.roundId,
      ordinal: 1,
      asks: ['ask-0000000000000001'],
      workOrderDigest: 'd-1',
      worker: { kind: 'scripted', version: null },
      workspace: { root: repo.dir, branch: 'feature' },
      fromPatchsetId: patchset.id,
      fromGenerationId: null,
      startedAt: T0,
    });
    receipt(ROUND_EVENT_KINDS.reported, { round: report.roundId, report, harness: 'scripted', model: null });
    receipt(ROUND_EVENT_KINDS.generation, { round: report.roundId, generationId });
    const settled = () => new Set(store.listLaneOutcomes(generationId).map((o) => o.lens));
    await until(() => ['design', 'decisions', 'flagged'].every((l) => settled().has(l as Lens)) && gates.some((g) => g.held.includes('sequence:drafter')), 'three lanes settled, Sequence held');
    first.dispose();
    await until(() => generationRunHolder(store.dir, generationId) === null, 'the first run to let go of its claim');
    const contextDir = join(repo.dir, '.rennet', 'context', sessionId);
    assert.ok(readFileSync(join(contextDir, 'round-report.md'), 'utf8').includes(askText));
    rmSync(contextDir, { recursive: true, force: true });

    // The next host: the unsettled lanes read as stopped, resumable; runLenses resumes the same generation.
    const base2 = scriptedAssignment(fullScriptFor(patchset));
    const logs: string[] = [];
    const pushes: GenerationSnapshot[] = [];
    const second = runnerOver(store, service, base2, logs, pushes);
    const before = second.get({ sessionId });
    assert.ok(before.ok && before.value);
    assert.deepEqual(
      before.value.lanes.map((l) => l.state),
      ['settled', 'failed', 'settled', 'settled', 'failed'],
    );
    assert.match(before.value.lanes[1]!.failure!.message, /Draft again resumes this generation/);
    assert.equal(roundReportOfGeneration(store, sessionId, generationId)?.asks[0]?.text, askText);

    const again = await second.runLenses({ sessionId, harness: CONFIG });
    assert.ok(again.ok, again.ok ? '' : again.error.message);
    assert.equal(again.value.generationId, generationId);
    await until(() => settled().size === LENSES.length, 'every lane to settle', 30_000);
    await until(() => pushes.some((p) => p.lanes.every((l) => l.state === 'settled')), 'the last push');
    const turns = (seat: string) => base2.harnesses.reduce((n, h) => n + h.turnsOf(seat).length, 0);
    for (const seat of ['design:drafter', 'decisions:drafter', 'flagged:compiler']) assert.equal(turns(seat), 0, `${seat} ran again`);
    assert.equal(
      base2.harnesses.reduce((n, h) => n + h.turnsOf('flagged').length, 0),
      0,
      'no Flagged seat ran again',
    );
    assert.ok(turns('sequence:drafter') > 0 && turns('noise:drafter') > 0);
    const roundFile = readFileSync(join(contextDir, 'round-report.md'), 'utf8');
    assert.ok(roundFile.includes(askText), 'the resumed lanes read the round report');
    assert.ok(
      logs.some((l) => l.includes('resuming (kept with no model call: design, decisions, flagged; drafting again: sequence, noise)')),
      logs.join('\n'),
    );
    assert.equal(store.listGenerations(sessionId).length, 1, 'no new generation');
    // The pushes folded are the generation as the store reads it once the run is over.
    await until(() => {
      const got = second.get({ sessionId });
      return got.ok && got.value !== null && got.value.revision === undefined;
    }, 'the push stream to close');
    const stored = second.get({ sessionId });
    assert.ok(stored.ok && stored.value);
    const { revision: _revision, ...folded } = pushes.at(-1)!;
    assert.deepEqual(JSON.parse(JSON.stringify(folded)), JSON.parse(JSON.stringify(stored.value)));
    assert.ok(!logs.some((l) => l.startsWith('a delta did not apply') || /differed from the store/.test(l)), logs.join('\n'));
    second.dispose();
  });
});

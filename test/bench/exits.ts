import { performance } from 'node:perf_hooks';
import type { AskEvent } from '../../protocol/asks';
import type { ReviewTarget } from '../../protocol/exits';
import type { Patchset } from '../../protocol/patchset';
import { foldAskLog } from '../../host/asks/fold';
import { capturePatchset } from '../../host/capture/capture';
import { openRepo } from '../../host/capture/repo';
import { composeReview } from '../../host/exits/compose';
import { githubAdapter } from '../../host/forge/github';
import { TestRepo } from '../fixtures/gitRepo';
import { startFakeForge } from '../servers/fakeForge';

/**
 * Post review at scale (`npm run bench -- --only exits`). Composition of a review from 1,000
 * staged asks (850 on changed lines, the rest general, board prose or another capture), beside the
 * fold of the same asks' log measured in the same run; then posting its 300 comments to the
 * loopback fake forge, beside one GET of the pull request there: a GitHub post is one review
 * request whatever the comment count, so it should cost a small multiple of one round trip.
 */

const ASKS = 1000;
/** Asks on changed lines in the composed review; the rest fold into its body (GitHub caps a body at 65,536 characters). */
const LINE_ASKS = 850;
/** Comments of the posted review. */
const POSTED = 300;
const RUNS = 7;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

function bigChange(): TestRepo {
  const repo = new TestRepo();
  const files = 30;
  const text = (f: number, changed: boolean) => Array.from({ length: 200 }, (_, i) => (changed && i % 20 === 5 ? `changed ${f}:${i}` : `line ${f}:${i}`)).join('\n') + '\n';
  for (let f = 0; f < files; f++) repo.write(`src/f${String(f).padStart(2, '0')}.ts`, text(f, false));
  repo.commit('base');
  repo.branch('feature');
  for (let f = 0; f < files; f++) repo.write(`src/f${String(f).padStart(2, '0')}.ts`, text(f, true));
  repo.commit('change');
  repo.checkout('main');
  return repo;
}

function stagingLog(patchset: Patchset, asks: number, lineAsks: number): AskEvent[] {
  const lines = patchset.files.flatMap((f) => f.hunks.flatMap((h) => h.lines.filter((l) => l.kind === 'add').map((l) => ({ path: f.path, line: l.newLine as number }))));
  const events: AskEvent[] = [];
  for (let i = 0; i < asks; i++) {
    const at = lines[i % lines.length] as { path: string; line: number };
    const anchor =
      i < lineAsks
        ? { kind: 'line' as const, patchsetId: patchset.id, path: at.path, side: 'head' as const, startLine: at.line, endLine: at.line }
        : i % 3 === 0
          ? { kind: 'none' as const }
          : i % 3 === 1
            ? { kind: 'quote' as const, generationId: 'g-bench', lens: 'sequence' as const, elementId: `e${i}`, quote: `Passage ${i} of the board.` }
            : { kind: 'line' as const, patchsetId: 'ps-earlier', path: at.path, side: 'head' as const, startLine: at.line, endLine: at.line };
    events.push({
      type: 'stage',
      askId: `ask-${i.toString(16).padStart(8, '0')}`,
      anchor,
      text: `Ask ${i}: look at this again, it reads wrong.`,
      intent: i % 7 === 0 ? 'request-change' : 'comment',
      lane: 'post-review',
      createdAt: '2026-12-01T00:00:00.000Z',
      editedAt: null,
      ordinal: i + 1,
    });
  }
  return events;
}

export async function benchExits(): Promise<string> {
  const repo = bigChange();
  const forge = await startFakeForge();
  try {
    const handle = await openRepo(repo.dir);
    if (!handle.ok) throw new Error(handle.error.message);
    const captured = await capturePatchset(handle.value, { kind: 'branch', base: 'main', head: 'feature' });
    if (!captured.ok) throw new Error(captured.error.message);
    const patchset = captured.value;
    const log = stagingLog(patchset, ASKS, LINE_ASKS);

    const folds: number[] = [];
    const composes: number[] = [];
    const target: ReviewTarget = { provider: 'github', host: new URL(forge.url).host, owner: 'acme', repo: 'bench', number: 1, headSha: patchset.head, baseSha: patchset.base };
    let composed: ReturnType<typeof composeReview> | null = null;
    for (let r = 0; r < RUNS; r++) {
      const t0 = performance.now();
      const projection = foldAskLog(log).projection;
      const t1 = performance.now();
      composed = composeReview({ sessionId: 's-bench', patchset, projection, target, ownPullRequest: false, grounding: { lenses: [], findings: { open: 0, dismissed: 0 } } });
      const t2 = performance.now();
      folds.push(t1 - t0);
      composes.push(t2 - t1);
    }
    if (!composed?.ok) throw new Error(`the bench review did not compose: ${JSON.stringify(composed && !composed.ok ? composed.error : null)}`);
    const large = composed.value;
    const posting = composeReview({
      sessionId: 's-bench',
      patchset,
      projection: foldAskLog(stagingLog(patchset, POSTED, POSTED)).projection,
      target,
      ownPullRequest: false,
      grounding: { lenses: [], findings: { open: 0, dismissed: 0 } },
    });
    if (!posting.ok) throw new Error(`the posted review did not compose: ${posting.error.message}`);
    const review = posting.value;

    forge.addUser({ login: 'alice', token: 'alice-token' });
    forge.addUser({ login: 'bob', token: 'bob-token' });
    await forge.createRepo({ provider: 'github', owner: 'acme', name: 'bench', from: repo.dir });
    await forge.openPullRequest({ provider: 'github', owner: 'acme', name: 'bench', author: 'alice', head: 'feature', base: 'main', title: 'Bench' });
    const adapter = githubAdapter({ provider: 'github', host: target.host, owner: 'acme', repo: 'bench', apiUrl: forge.githubApiUrl, webUrl: `${forge.url}/acme/bench` }, 'bob-token', {
      spaceWrites: false,
    });
    const gets: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      const t0 = performance.now();
      await adapter.get(1);
      gets.push(performance.now() - t0);
    }
    forge.clearRequests();
    const t0 = performance.now();
    const posted = await adapter.post(1, review, patchset.head, patchset.files);
    const postMs = performance.now() - t0;
    const reviewRequests = forge.requests({ method: 'POST', pathPattern: '/reviews$' }).length;

    const fold = median(folds);
    const compose = median(composes);
    const get = median(gets);
    return [
      `asks: ${ASKS} staged (${LINE_ASKS} on changed lines); ${patchset.files.length} files, ${patchset.totals.hunks} hunks; the posted review: ${POSTED} line asks`,
      `compose             ${compose.toFixed(1)} ms median of ${RUNS} → ${large.descriptor.comments.length} comments, ${large.descriptor.folded.length} folded, body ${large.descriptor.body.length.toLocaleString('en-US')} chars`,
      `fold of the same log ${fold.toFixed(1)} ms (ratio compose/fold ${(compose / fold).toFixed(2)}×)`,
      `post ${posted.comments} comments  ${postMs.toFixed(1)} ms in ${reviewRequests} review request${reviewRequests === 1 ? '' : 's'} (one GET of the request ${get.toFixed(1)} ms; ratio ${(postMs / get).toFixed(1)}×)`,
    ].join('\n');
  } finally {
    await forge.close();
    repo.cleanup();
  }
}

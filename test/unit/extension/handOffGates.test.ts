import * as assert from 'node:assert/strict';
import type { AskProjection } from '../../../protocol/asks';
import type { PullRequestRecord } from '../../../protocol/forge';
import { GatesReport, type BranchFreshness, type Gate } from '../../../protocol/gates';
import { err, ok, rennetError } from '../../../protocol/result';
import { SessionSnapshot, targetKey, type Target } from '../../../protocol/session';
import { gateRows, HAND_OFF_COMMANDS, planHandOff, type HandOffGates, type HandOffRow } from '../../../extension/handOffPlan';
import { Md } from '../../../extension/uiText';
import { Asks } from '../exits/fixtures';

/**
 * The Hand off view's merge gate rows (extension/handOffPlan.ts `gateRows`): the freshness line
 * first with its one refresh action, the gates by name with pass/fail/pending icons (ThemeIcon ids
 * and colors), and "Merge…" only when every gate passes on an open request whose copy is at the
 * head — carrying that head. Forge-chosen names and details stay text.
 */

const SID = 'ses-pr';
const HEAD = 'a'.repeat(40);
const PR: Target = { kind: 'pull-request', provider: 'github', host: 'github.com', owner: 'acme', repo: 'widgets', number: 12 };
const WORD_JOINER = '\u2060';

function snapshot(target: Target): SessionSnapshot {
  const pullRequest: PullRequestRecord = {
    number: 12,
    title: 'T',
    body: '',
    author: 'dana',
    viewer: 'sam',
    entry: 'teammate',
    webUrl: 'https://github.com/acme/widgets/pull/12',
    state: 'open',
    draft: false,
    headRef: 'retry',
    headSha: HEAD,
    baseRef: 'main',
    baseSha: 'c'.repeat(40),
    readAt: '2026-01-01T00:00:00.000Z',
    issues: [],
  };
  return SessionSnapshot.parse({
    session: {
      id: SID,
      repoRoot: '/r/widgets',
      targetKey: targetKey(target),
      target,
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
      activePatchsetId: 'ps-1',
      patchsetIds: ['ps-1'],
    },
    patchset: null,
    ...(target.kind === 'pull-request' ? { pullRequest } : {}),
  });
}

const gate = (name: string, kind: Gate['kind'], state: Gate['state'], detail: string = state): Gate => ({ name, kind, state, detail });
const PASSING: Gate[] = [
  gate('build', 'check', 'pass', 'success'),
  gate('ci/legacy', 'status', 'pass', 'success'),
  gate('draft', 'draft', 'pass'),
  gate('mergeable', 'mergeable', 'pass'),
  gate('behind-base', 'behind-base', 'pass'),
  gate('required-reviews', 'required-reviews', 'pass'),
  gate('review-at-head', 'review-at-head', 'pass'),
];

function freshness(state: BranchFreshness['state'], action: BranchFreshness['action'], message: string): BranchFreshness {
  return { state, action, message, localRef: 'refs/heads/retry', localKind: 'branch', local: HEAD, trackingRef: 'refs/remotes/origin/retry', tracking: HEAD, prHead: HEAD, ahead: 0, behind: 0 };
}

function report(gates: Gate[], fresh = freshness('in-sync', 'none', "Your retry is at the request's head aaaaaaa."), state: 'open' | 'closed' | 'merged' = 'open') {
  return GatesReport.parse({ provider: 'github', number: 12, head: HEAD, headRef: 'retry', baseRef: 'main', state, freshness: fresh, gates });
}

const rowsOf = (g: HandOffGates | null) => gateRows(SID, 'github', g);
const byId = (rows: HandOffRow[], prefix: string) => rows.find((r) => (prefix === 'gates' ? r.id === prefix : r.id.startsWith(prefix)));

describe('Hand off: merge gate rows', () => {
  it('are part of a pull-request session’s plan, after its exit; a branch review has none', () => {
    const projection: AskProjection = new Asks().projection();
    const plan = planHandOff({ session: snapshot(PR), projection, gates: { read: ok(report(PASSING)) } });
    const ids = plan.rows.map((r) => r.id);
    assert.ok(ids.indexOf('exit:preview') < ids.indexOf(`gates:fresh:in-sync:${HEAD}`), ids.join(' '));
    assert.ok(ids.includes('gates') && ids.includes(`exit:merge:${HEAD}`));
    const branch = planHandOff({ session: snapshot({ kind: 'branch', head: 'feature', base: 'main' }), projection, gates: { read: ok(report(PASSING)) } });
    assert.ok(!branch.rows.some((r) => r.id.startsWith('gates') || r.id.startsWith('exit:merge')));
    assert.deepEqual(rowsOf(null), []);
  });

  it('while read: one reading row; a failed read: its words, and a click reads again', () => {
    assert.deepEqual(
      rowsOf({ read: undefined }).map((r) => [r.id, r.icon]),
      [['notice:gates-reading', 'loading~spin']],
    );
    const [failed] = rowsOf({ read: err(rennetError('forge-failed', 'GitHub did not answer')) });
    assert.equal(failed?.label, 'Could not read the merge gates: GitHub did not answer');
    assert.equal(failed?.command?.id, HAND_OFF_COMMANDS.refreshGates);
  });

  it('every gate passes at the head: freshness first, the gates by name with pass icons, then Merge… carrying the head', () => {
    const rows = rowsOf({ read: ok(report(PASSING)) });
    assert.deepEqual(
      rows.map((r) => r.id),
      [`gates:fresh:in-sync:${HEAD}`, 'gates', `exit:merge:${HEAD}`],
    );
    assert.equal(rows[0]?.label, 'Up to date with the head aaaaaaa');
    const group = rows[1] as HandOffRow;
    assert.equal(group.description, '7 of 7 pass at aaaaaaa');
    assert.deepEqual(
      group.children?.map((c) => [c.label, c.icon, c.iconColor, c.contextValue]),
      PASSING.map((g) => [g.name, 'pass', 'testing.iconPassed', 'handoff-gate-pass']),
    );
    const merge = rows[2] as HandOffRow;
    assert.equal(merge.label, 'Merge…');
    assert.deepEqual(merge.command, { id: HAND_OFF_COMMANDS.merge, title: 'Merge', arguments: [SID, HEAD, 'github', 12] });
  });

  it('a failing or pending gate: error and watch icons, no Merge…, and a line saying why', () => {
    const gates = [...PASSING.slice(0, 1), gate('e2e', 'check', 'pending', 'in progress'), gate('lint', 'check', 'fail', 'failure: 3 errors'), ...PASSING.slice(2)];
    const rows = rowsOf({ read: ok(report(gates)) });
    assert.ok(!rows.some((r) => r.id.startsWith('exit:merge')), 'no Merge… while a gate does not pass');
    const children = (byId(rows, 'gates') as HandOffRow).children ?? [];
    const e2e = children.find((c) => c.label === 'e2e');
    const lint = children.find((c) => c.label === 'lint');
    assert.deepEqual([e2e?.icon, e2e?.iconColor, e2e?.description], ['watch', 'testing.iconQueued', 'in progress']);
    assert.deepEqual([lint?.icon, lint?.iconColor, lint?.description], ['error', 'testing.iconFailed', 'failure: 3 errors']);
    assert.equal(byId(rows, 'notice:merge-blocked')?.label, 'Merge is offered once every gate passes (2 do not yet).');
    assert.equal(byId(rows, 'gates')?.description, '6 of 8 pass at aaaaaaa');
  });

  it('the copy is not at the head: the freshness line first, naming its action; no Merge… even though every gate passes', () => {
    const behind = freshness('local-behind', 'pull', "Your retry is 2 commits behind the request's head aaaaaaa: pull (git merge --ff-only aaaaaaa, on retry).");
    const rows = rowsOf({ read: ok(report(PASSING, behind)) });
    const first = rows[0] as HandOffRow;
    assert.equal(first.id, `gates:fresh:local-behind:${HEAD}`);
    assert.equal(first.label, behind.message);
    assert.equal(first.description, 'Pull');
    assert.equal(first.command?.id, HAND_OFF_COMMANDS.refreshGates);
    assert.ok(!rows.some((r) => r.id.startsWith('exit:merge')));
    assert.ok(byId(rows, 'notice:merge-stale'));
    const captured = rowsOf({ read: ok(report(PASSING, freshness('local-behind', 'capture-new-head', 'The review read bbbbbbb, 1 commit behind the request’s head aaaaaaa: Capture New Head.'))) });
    assert.deepEqual([captured[0]?.description, captured[0]?.command?.id, captured[0]?.command?.arguments], ['Capture New Head', HAND_OFF_COMMANDS.captureNewHead, [SID]]);
  });

  it('hostile check names and details stay text: no icon, no link, no Markdown, no command', () => {
    const hostile = gate('$(check) [merge me](command:rennet.gates.merge?["x"])', 'check', 'fail', '$(pass) all good, see [docs](command:workbench.action.terminal.new)');
    const rows = rowsOf({ read: ok(report([hostile, ...PASSING.slice(2)])) });
    const row = ((byId(rows, 'gates') as HandOffRow).children ?? [])[0] as HandOffRow;
    assert.ok(row.label.startsWith(`$${WORD_JOINER}(check) [merge me]${WORD_JOINER}(command:`), row.label);
    assert.ok(!row.label.includes('$(') && !row.label.includes(']('));
    assert.ok(!(row.description ?? '').includes('$(') && !(row.description ?? '').includes(']('));
    assert.ok(!(row.tooltip instanceof Md), 'the tooltip is plain text');
    assert.ok(!String(row.tooltip).includes(']('));
    assert.equal(row.command, undefined, 'a gate row runs nothing');
    assert.equal(row.id, `gate:check:${hostile.name}`);
  });

  it('a closed request offers no merge; a merge made from here replaces the gates with one link to it', () => {
    const closed = rowsOf({ read: ok(report(PASSING, undefined, 'closed')) });
    assert.ok(byId(closed, 'notice:merge-closed'));
    assert.ok(!closed.some((r) => r.id.startsWith('exit:merge')));
    const merged = rowsOf({
      read: ok(report(PASSING)),
      merged: { provider: 'github', number: 12, merged: true, head: HEAD, method: 'squash', sha: 'd'.repeat(40), url: 'https://github.com/acme/widgets/pull/12' },
    });
    assert.equal(merged.length, 1);
    assert.equal(merged[0]?.label, 'Merged at aaaaaaa (squash)');
    assert.deepEqual(merged[0]?.subject, { kind: 'link', sessionId: SID, url: 'https://github.com/acme/widgets/pull/12' });
    assert.equal(merged[0]?.command?.id, HAND_OFF_COMMANDS.openLink);
  });
});

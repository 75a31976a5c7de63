import { PULL_REQUEST_EVENT_KIND, PullRequestRecord } from '../../protocol/forge';
import { err, ok, rennetError, type Result } from '../../protocol/result';
import type { PullRequestTarget, Session } from '../../protocol/session';
import { plainBranchName } from '../forge/freshness';
import { listRemotes } from '../forge/remote';
import { runGit } from '../git/run';
import { DISPATCH_REFUSAL_WORDS, type RoundMode } from './workOrder';

/**
 * Rounds on one's own pull or merge request. The request's review loops exactly as a branch
 * review does, on the request's head branch (`record.headRef`): the bind shares a checkout that has
 * it out, else places Rennet's worktree of it, and the successor names that branch. What decides
 * whose request it is is the session's `forge.pullRequest` record as last read (`entry`): a
 * teammate's request has no round lane. Refused, in words and changing nothing: a head branch that
 * is not here (naming the one fetch that makes it), a head in another repository (a fork: its
 * commits would have nowhere here to be pushed to), and a head branch that does not contain the
 * head the review read.
 */

type EventReader = { readEvents(sessionId: string): Array<{ kind: string; payload: unknown }> };

/** The request as last read from its forge (the newest `forge.pullRequest` event), or null. */
export function pullRequestRecordOf(store: EventReader, sessionId: string): PullRequestRecord | null {
  const events = store.readEvents(sessionId).filter((e) => e.kind === PULL_REQUEST_EVENT_KIND);
  const parsed = PullRequestRecord.safeParse(events.at(-1)?.payload);
  return parsed.success ? parsed.data : null;
}

/** Who the review is for, as far as rounds care: a branch is one's own; a request is whoever its record says (a teammate's until the forge said otherwise). */
export function roundModeOf(store: EventReader, session: Session): RoundMode {
  if (session.target.kind !== 'pull-request') return 'own';
  return pullRequestRecordOf(store, session.id)?.entry === 'own' ? 'own' : 'teammate';
}

/** The remote whose URL names the request's repository (for the command a refusal names); `<remote>` when none does. */
async function requestRemote(repoRoot: string, target: PullRequestTarget): Promise<string> {
  const remotes = await listRemotes(repoRoot);
  const path = `${target.owner}/${target.repo}`.toLowerCase();
  const names = (url: string) => {
    const u = url
      .toLowerCase()
      .replace(/\/+$/, '')
      .replace(/\.git$/, '');
    return u.includes(target.host.toLowerCase()) && (u.endsWith(`/${path}`) || u.endsWith(`:${path}`));
  };
  const found = remotes.find((r) => names(r.fetchUrl) || names(r.pushUrl));
  if (found) return found.name;
  return remotes.length === 1 && remotes[0] ? remotes[0].name : '<remote>';
}

/**
 * The branch a round on this review commits on: a branch review's own head; one's own request's
 * head branch, when this repository has it. Everything else is refused, saying why.
 */
export async function reviewedBranch(store: EventReader, session: Session): Promise<Result<string>> {
  const target = session.target;
  if (target.kind === 'branch') return ok(target.head);
  if (target.kind === 'working-tree') return err(rennetError('invalid-request', 'a working-tree review has no branch for a round to commit on: review the branch instead'));
  const record = pullRequestRecordOf(store, session.id);
  if (!record) return err(rennetError('invalid-request', 'the request was never read from its forge: open its review again before a round runs'));
  if (record.entry !== 'own') return err(rennetError('invalid-request', DISPATCH_REFUSAL_WORDS['no-round-lane'], { refusal: 'no-round-lane' }));
  const branch = record.headRef;
  if (record.headRepo) {
    return err(
      rennetError(
        'invalid-request',
        `this request's head is ${record.headRepo}:${branch}, a branch of another repository (a fork): a round commits on a branch of this repository, and nothing here would push its commits to ${record.headRepo}. Loop rounds in a clone of ${record.headRepo}, or review the branch (Rennet: Review Branch) where you have it`,
        { headRepo: record.headRepo, branch },
      ),
    );
  }
  if (!plainBranchName(branch)) return err(rennetError('invalid-request', `the request's head branch is not a branch name git accepts here (${JSON.stringify(branch)})`));
  const here = await runGit(['rev-parse', '--verify', '--quiet', '--end-of-options', `refs/heads/${branch}^{commit}`], { cwd: session.repoRoot });
  if (here.code !== 0) {
    const remote = await requestRemote(session.repoRoot, target);
    return err(
      rennetError(
        'unknown-ref',
        `${branch}, the request's head branch, is not a branch in ${session.repoRoot}: a round commits on it. Make it here with git fetch ${remote} ${branch}:${branch}, then dispatch`,
        {
          branch,
          command: `git fetch ${remote} ${branch}:${branch}`,
        },
      ),
    );
  }
  return ok(branch);
}

/**
 * One's own request: the branch the round commits on (the work branch, else the head branch)
 * must contain the head the review read, or the worker would edit code the asks were not written
 * on. Null when it does (or the review is not of a request).
 */
export async function requestHeadRefusal(session: Session, workspace: { branch: string; workBranch?: string }, reviewedHead: string): Promise<Result<never> | null> {
  if (session.target.kind !== 'pull-request') return null;
  const root = session.repoRoot;
  const tipOf = async (branch: string) => {
    const r = await runGit(['rev-parse', '--verify', '--quiet', '--end-of-options', `refs/heads/${branch}^{commit}`], { cwd: root });
    return r.code === 0 ? r.stdout.toString('utf8').trim() : null;
  };
  // A sibling not forked yet forks from the head branch.
  const name = workspace.workBranch && (await tipOf(workspace.workBranch)) !== null ? workspace.workBranch : workspace.branch;
  const tip = await tipOf(name);
  if (tip === reviewedHead) return null;
  const contains = tip !== null && (await runGit(['merge-base', '--is-ancestor', reviewedHead, tip], { cwd: root })).code === 0;
  if (contains) return null;
  return err(
    rennetError(
      'invalid-request',
      `${name} is at ${tip ? tip.slice(0, 12) : 'no commit'}, which does not contain ${reviewedHead.slice(0, 12)}, the head this review read: a round would change code the asks were not written on. Bring ${name} up to it (git merge --ff-only ${reviewedHead.slice(0, 12)}, on ${name}), then dispatch`,
      { branch: name, tip: tip ?? '', reviewedHead },
    ),
  );
}

import type { ForgeProvider, PrPolish } from '../../protocol/exits';
import { recordPushDestination } from '../rounds/landing';
import { recordedBinding } from '../rounds/workspace';
import type { ForgeRepo } from '../../protocol/forge';
import { err, ok, rennetError, type Result } from '../../protocol/result';
import type { GenerationSnapshot } from '../../protocol/review';
import { currentBranch, listBranches, openRepo } from '../capture/repo';
import { runGit } from '../git/run';
import { adapterFor, forgeFailure, type ForgeAccess } from '../forge/pullRequests';
import { workspaceForge, type RemoteInfo } from '../forge/remote';
import { ForgeError } from '../forge/types';
import type { Session, Target } from '../../protocol/session';
import type { Store } from '../store';
import { currentGenerationId, readGenerationSnapshot } from '../generation/generationSnapshot';
import { polishDraft, type PolishDeps } from './prPolish';
import { draftPullRequest, pullRequestCompositionId, type BranchCommit, type PullRequestDraft } from './prDraft';

/**
 * Open pull request (one's own branch): the destination is resolved from the branch's push URL,
 * the title and description are drafted (or given), and the submission is bound to all of it by a
 * composition id. Opening resolves the destination again and refuses any drift before the push,
 * pushes `refs/heads/<branch>:refs/heads/<branch>` to that remote (no upstream is written), and
 * reuses an open request for the same head and base, else creates one.
 */

export interface OpenPrPreview {
  compositionId: string;
  provider: ForgeProvider;
  destination: { host: string; owner: string; repo: string; remote: string; webUrl: string };
  branch: string;
  base: string;
  title: string;
  body: string;
  sources: string[];
  polish: PrPolish;
  /** The open request for this head and base, which opening reuses; null when one would be created. */
  existing: { number: number; url: string } | null;
}

export interface OpenPrResult {
  url: string;
  number: number;
  reused: boolean;
  provider: ForgeProvider;
}

export interface OpenPrInput {
  repoDir: string;
  /** The branch to open a request for; absent: the current branch (a detached HEAD is refused). */
  branch?: string;
  base?: string;
  title?: string;
  body?: string;
  /** The boards of the branch's review, when it has one (the draft reads them). */
  generation?: (branch: string, base: string) => GenerationSnapshot | null;
  /**
   * The reviewer's saved edit of the draft, kept on the branch's review (`pr.draftEdit` events):
   * read when this call names no title or body, and saved when it names one that differs.
   */
  draftEdits?: {
    read(branch: string, base: string): { title?: string; body?: string } | null;
    save(branch: string, base: string, edit: { title?: string; body?: string }): void;
  };
  /**
   * Where the branch's commits are, when not on the branch itself: a review bound on a sibling
   * (`rennet/<branch>`, host/rounds/workspace.ts) has its rounds' commits there. The push then sends
   * that branch under the reviewed branch's name, and `pushed` records where it went (the landing
   * line reads it). null: the branch holds its commits.
   */
  workBranch?: (branch: string, base: string) => { name: string; pushed(destination: { remote: string; branch: string }): void } | null;
  /** A model's pass over the deterministic draft (prPolish.ts); absent: the draft as it is. */
  polish?: (request: { branch: string; base: string; commits: readonly BranchCommit[]; draft: PullRequestDraft }) => Promise<{ title: string; body: string; polish: PrPolish }>;
}

/** The session event a saved edit of an own-branch request's draft is kept under. */
export const PR_DRAFT_EDIT_EVENT_KIND = 'pr.draftEdit';

async function gitOut(cwd: string, args: string[]): Promise<string | null> {
  const r = await runGit(args, { cwd });
  return r.code === 0 ? r.stdout.toString('utf8').trim() : null;
}

interface Located {
  root: string;
  branch: string;
  /** The branch pushed under `branch`'s name: `branch` itself, or the review's sibling. */
  source: string;
  work: ReturnType<NonNullable<OpenPrInput['workBranch']>>;
  base: string;
  remote: RemoteInfo;
  repo: ForgeRepo;
  draft: PullRequestDraft;
  polish: PrPolish;
  compositionId: string;
}

async function locate(input: OpenPrInput, access: ForgeAccess): Promise<Result<Located>> {
  const handle = await openRepo(input.repoDir);
  if (!handle.ok) return handle;
  const root = handle.value.root;
  const branch = input.branch ?? (await currentBranch(handle.value));
  if (!branch) return err(rennetError('detached-head', 'HEAD is detached: there is no branch to open a request from (name one with --branch)'));
  if ((await gitOut(root, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`])) === null) {
    return err(rennetError('unknown-ref', `${branch} is not a local branch`));
  }
  const branches = await listBranches(handle.value);
  if (!branches.ok) return branches;
  const base = input.base ?? branches.value.defaultBase;
  if (!base) return err(rennetError('unknown-ref', 'no base branch found (no origin/HEAD, main or master); name one with --base'));
  if (base === branch) return err(rennetError('invalid-request', `${branch} is the base branch: a request needs a head other than its base`));
  const located = await workspaceForge(root, branch, access.registry);
  if (!located.ok) return located;
  const work = input.workBranch?.(branch, base) ?? null;
  const source = work?.name ?? branch;
  if (work && (await gitOut(root, ['rev-parse', '--verify', '--quiet', `refs/heads/${source}^{commit}`])) === null) {
    return err(rennetError('unknown-ref', `${source}, where this review's rounds commit, is not a local branch`));
  }
  const log = await gitOut(root, ['log', '--reverse', '--format=%H%x00%s', `${base}..refs/heads/${source}`, '--']);
  if (log === null) return err(rennetError('unknown-ref', `git could not list the commits of ${branch} over ${base}`));
  const commits = log
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [sha, subject] = line.split('\0');
      return { sha: sha ?? '', subject: subject ?? '' };
    });
  if (commits.length === 0) return err(rennetError('empty-change', `${branch} has no commits over ${base}: there is nothing to open a request for`));
  const stored = input.draftEdits?.read(branch, base) ?? null;
  const given =
    input.title !== undefined || input.body !== undefined ? { ...(input.title !== undefined ? { title: input.title } : {}), ...(input.body !== undefined ? { body: input.body } : {}) } : null;
  // An edit is saved, so a reload, the next preview and the submission all read the same text.
  const edit = given ? { ...stored, ...given } : stored;
  if (given && (given.title !== stored?.title || given.body !== stored?.body)) input.draftEdits?.save(branch, base, edit ?? given);
  const generation = input.generation?.(branch, base) ?? null;
  const final = draftPullRequest({ branch, base, commits, generation, edit });
  // The model reads the deterministic draft (never the edit), so an edit of one part does not
  // polish the other again; an edited part is the reviewer's, whatever the model wrote.
  const titleEdited = Boolean(edit?.title?.trim());
  const bodyEdited = edit?.body !== undefined && edit.body.trim() !== '';
  let draft = final;
  let polish: PrPolish = { state: 'off', reason: 'no model pass was asked for: the text is drafted from the commits and the review boards' };
  if (titleEdited && bodyEdited) polish = { state: 'off', reason: 'the title and description are your edit' };
  else if (input.polish) {
    const drafted = edit ? draftPullRequest({ branch, base, commits, generation, edit: null }) : final;
    const polished = await input.polish({ branch, base, commits, draft: drafted });
    polish = polished.polish;
    if (polish.state === 'polished') {
      draft = {
        title: titleEdited ? final.title : polished.title,
        body: bodyEdited ? final.body : polished.body,
        sources: [...final.sources.filter((s) => s !== 'edited'), 'model', ...(titleEdited || bodyEdited ? ['edited'] : [])],
      };
    }
  }
  const repo = located.value.repo;
  const compositionId = pullRequestCompositionId({ provider: repo.provider, host: repo.host, owner: repo.owner, repo: repo.repo, branch, base, title: draft.title, body: draft.body });
  return ok({ root, branch, source, work, base, remote: located.value.remote, repo, draft, polish, compositionId });
}

/** What opening would submit, exactly; nothing is pushed or created. */
export async function previewPullRequest(input: OpenPrInput, access: ForgeAccess): Promise<Result<OpenPrPreview>> {
  const located = await locate(input, access);
  if (!located.ok) return located;
  const { repo, remote, branch, base, draft, polish, compositionId } = located.value;
  const adapter = await adapterFor(access, repo);
  if (!adapter.ok) return adapter;
  let existing: OpenPrPreview['existing'] = null;
  try {
    const open = await adapter.value.findOpenFor(branch, base);
    existing = open ? { number: open.number, url: open.webUrl } : null;
  } catch (error) {
    return forgeFailure(error, `looking for an open request of ${branch} into ${base}`);
  }
  return ok({
    compositionId,
    provider: repo.provider,
    destination: { host: repo.host, owner: repo.owner, repo: repo.repo, remote: remote.name, webUrl: repo.webUrl },
    branch,
    base,
    title: draft.title,
    body: draft.body,
    sources: draft.sources,
    polish,
    existing,
  });
}

/** Pushes the branch and opens (or reuses) the request; refuses a destination or text that drifted from `expectComposition`. */
export async function openPullRequest(input: OpenPrInput & { expectComposition?: string }, access: ForgeAccess): Promise<Result<OpenPrResult>> {
  // Resolved again here: the push and the forge call use this one resolution.
  const located = await locate(input, access);
  if (!located.ok) return located;
  const { root, repo, remote, branch, source, work, base, draft, compositionId } = located.value;
  if (input.expectComposition && input.expectComposition !== compositionId) {
    return err(rennetError('stale-composition', 'the request would differ from the one previewed (destination, branches, title or description changed); preview it again; nothing was pushed'));
  }
  const adapter = await adapterFor(access, repo);
  if (!adapter.ok) return adapter;
  // A sibling's commits go to the reviewed branch's name on the remote; the local branch does not move.
  const pushed = await runGit(['push', '--porcelain', '--quiet', '--', remote.name, `refs/heads/${source}:refs/heads/${branch}`], { cwd: root, env: { GIT_TERMINAL_PROMPT: '0' } });
  if (pushed.code !== 0) {
    const words = `${pushed.stdout.toString('utf8')}\n${pushed.stderr}`
      .trim()
      .split('\n')
      .filter((l) => l && !l.startsWith('To '))
      .slice(-3)
      .join(' ');
    return err(rennetError('git-failed', `git could not push ${source === branch ? branch : `${source} as ${branch}`} to ${remote.name}: ${words || `exit ${pushed.code}`}; nothing was opened`));
  }
  work?.pushed({ remote: remote.name, branch });
  try {
    const existing = await adapter.value.findOpenFor(branch, base);
    if (existing) return ok({ url: existing.webUrl, number: existing.number, reused: true, provider: repo.provider });
    try {
      const created = await adapter.value.create({ headBranch: branch, baseBranch: base, title: draft.title, body: draft.body });
      return ok({ url: created.webUrl, number: created.number, reused: false, provider: repo.provider });
    } catch (error) {
      // A request opened meanwhile (or by a lost answer) for the same head and base is reused.
      if (error instanceof ForgeError && (error.kind === 'refused' || error.kind === 'unreachable')) {
        const raced = await adapter.value.findOpenFor(branch, base).catch(() => null);
        if (raced) return ok({ url: raced.webUrl, number: raced.number, reused: true, provider: repo.provider });
      }
      throw error;
    }
  } catch (error) {
    return forgeFailure(error, `opening a request of ${branch} into ${base} on ${repo.host}`);
  }
}

/**
 * Saved draft edits on the branch's review session (none when the branch was never reviewed: the
 * edit then lives only in the call that names it).
 */
export function sessionDraftEdits(
  store: { appendEvent(sessionId: string, kind: string, payload: unknown, now: string): unknown; readEvents(sessionId: string): Array<{ kind: string; payload: unknown }> },
  sessionOf: (branch: string, base: string) => string | null,
  now: () => string = () => new Date().toISOString(),
): NonNullable<OpenPrInput['draftEdits']> {
  return {
    read(branch, base) {
      const id = sessionOf(branch, base);
      if (!id) return null;
      const last = store
        .readEvents(id)
        .filter((e) => e.kind === PR_DRAFT_EDIT_EVENT_KIND)
        .at(-1)?.payload as { title?: unknown; body?: unknown } | undefined;
      if (!last) return null;
      return { ...(typeof last.title === 'string' ? { title: last.title } : {}), ...(typeof last.body === 'string' ? { body: last.body } : {}) };
    },
    save(branch, base, edit) {
      const id = sessionOf(branch, base);
      if (id) store.appendEvent(id, PR_DRAFT_EDIT_EVENT_KIND, edit, now());
    },
  };
}

/**
 * The input of an own-branch request as the VS Code host and the CLI build it: the branch's own
 * review (when it has one) feeds the draft and keeps its saved edits; with `polish`, the Design
 * lens's harness polishes the draft, reading that review's capture.
 */
export function branchOpenPrInput(
  reviews: { store: Store; findSession(repoRoot: string, target: Target): Session | undefined },
  root: string,
  params: { repoDir: string; branch?: string | undefined; base?: string | undefined; title?: string | undefined; body?: string | undefined },
  polish?: Omit<PolishDeps, 'store'> | null,
): OpenPrInput {
  const { store } = reviews;
  const sessionOf = (branch: string, base: string) => reviews.findSession(root, { kind: 'branch', head: branch, base }) ?? null;
  return {
    repoDir: params.repoDir,
    ...(params.branch !== undefined ? { branch: params.branch } : {}),
    ...(params.base !== undefined ? { base: params.base } : {}),
    ...(params.title !== undefined ? { title: params.title } : {}),
    ...(params.body !== undefined ? { body: params.body } : {}),
    generation: (branch, base) => {
      const session = sessionOf(branch, base);
      const id = session ? currentGenerationId(store, session.id) : null;
      return id ? readGenerationSnapshot(store, id) : null;
    },
    draftEdits: sessionDraftEdits(store, (branch, base) => sessionOf(branch, base)?.id ?? null),
    workBranch: (branch, base) => {
      const session = sessionOf(branch, base);
      const bound = session ? recordedBinding(store, session.id) : null;
      if (!session || !bound?.workBranch || bound.workBranch === branch) return null;
      const workBranch = bound.workBranch;
      return { name: workBranch, pushed: (destination) => recordPushDestination(store, session.id, { ...destination, workBranch }, new Date().toISOString()) };
    },
    ...(polish
      ? {
          polish: async ({ branch, base, commits, draft }) => {
            const session = sessionOf(branch, base);
            const patchset = session?.activePatchsetId ? store.getPatchset(session.activePatchsetId) : undefined;
            if (!session || !patchset) {
              return {
                title: draft.title,
                body: draft.body,
                polish: { state: 'off', reason: `${branch} has no review to read: review the branch first, and its title and description are written from what the review read` },
              };
            }
            return polishDraft(
              { ...polish, store },
              { sessionId: session.id, repoRoot: session.repoRoot, patchset, generationId: currentGenerationId(store, session.id), branch, base, commits, draft },
            );
          },
        }
      : {}),
  };
}

import { existsSync, realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { runGit } from '../git/run';
import { countBetween, isAncestor, recordedPushDestination } from './landing';
import { planSweep, type SiblingReach, type SweepPlan, type SweepSession } from './sweepPlan';
import { capGitWords, isArchived, listWorktrees, placementRoot, recordedBinding, type WorkspaceStore } from './workspace';

/**
 * The daemon-start sweep: run once when the host starts (host/main.ts), never from a bind. For
 * each repository the stored sessions name, it asks git and the store for the facts, lets
 * `planSweep` (host/rounds/sweepPlan.ts, PURE) decide, and carries the plan out the way an archive
 * collects a sibling: `git worktree remove` without --force (a worktree git will not remove keeps
 * its branch), then `git branch -d`, falling back to `-D` because the plan proved the tip reachable
 * from the branch; `git worktree prune` only when the plan says every unreachable registration may
 * go. It clears no session record (an archived session used again repairs its own, host/rounds/
 * workspace.ts). Every act and every refusal is logged; nothing here throws.
 */

export interface SweepStore extends WorkspaceStore {
  listSessions(): Array<{ id: string; repoRoot: string }>;
}

export type SweepLog = (level: 'info' | 'warn', line: string) => void;

/** What the sweep did in one repository. */
export interface RepositorySweep {
  repoRoot: string;
  /** The decision, or null when the repository could not be read (then `failure` says why). */
  plan: SweepPlan | null;
  failure: string | null;
  /** Sibling branches deleted (with their worktrees, where they had one). */
  collected: string[];
  /** Sibling branches kept, each with why. */
  kept: Array<{ workBranch: string; worktree: string | null; reason: string }>;
  /** `git worktree prune` ran and succeeded. */
  pruned: boolean;
}

const LOG_PREFIX = 'start sweep:';

/** `path` as the filesystem resolves it now: a lost directory through its nearest existing parent. Null when that is `path` itself. */
export function resolvedSpelling(path: string): string | null {
  let head = path;
  const rest: string[] = [];
  for (;;) {
    try {
      const resolved = join(realpathSync(head), ...rest);
      return resolved === path ? null : resolved;
    } catch {
      const parent = dirname(head);
      if (parent === head) return null;
      rest.unshift(basename(head));
      head = parent;
    }
  }
}

async function revParse(cwd: string, ref: string): Promise<string | null> {
  const r = await runGit(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], { cwd });
  return r.code === 0 ? r.stdout.toString('utf8').trim() : null;
}

/** git's words of a failed run, capped. */
function gitWords(r: { code: number; stdout: Buffer; stderr: string }): string {
  return capGitWords([r.stdout.toString('utf8').trim(), r.stderr.trim()].filter((w) => w.length > 0).join('\n') || `git exited ${r.code}`);
}

/** Whether the sibling's tip is in its branch: the local branch, each remote's ref of it, and any push destination a session recorded for it. */
async function reachOf(repoRoot: string, workBranch: string, branch: string, extraRefs: readonly string[]): Promise<SiblingReach | null> {
  const tip = await revParse(repoRoot, `refs/heads/${workBranch}`);
  if (!tip) return null;
  const remotes = await runGit(['remote'], { cwd: repoRoot });
  const refs = [`refs/heads/${branch}`];
  if (remotes.code === 0) {
    for (const name of remotes.stdout
      .toString('utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean))
      refs.push(`refs/remotes/${name}/${branch}`);
  }
  refs.push(...extraRefs);
  let reachedVia: string | null = null;
  let countFrom: string | null = null;
  for (const ref of [...new Set(refs)]) {
    const at = await revParse(repoRoot, ref);
    if (!at) continue;
    countFrom ??= at;
    const contains = await isAncestor(repoRoot, tip, at);
    if (!contains.ok) return null;
    if (contains.value) {
      reachedVia = ref;
      break;
    }
  }
  let ahead: number | null = null;
  if (countFrom) {
    const counted = await countBetween(repoRoot, countFrom, tip);
    ahead = counted.ok ? counted.value : null;
  }
  return { tip, reachedVia, ahead };
}

/** The refs a ref name is shown as in the log: `feature`, `origin/feature`. */
function shortRef(ref: string): string {
  if (ref.startsWith('refs/heads/')) return ref.slice('refs/heads/'.length);
  if (ref.startsWith('refs/remotes/')) return ref.slice('refs/remotes/'.length);
  return ref;
}

/** Sweeps one repository; `repoSpellings` are the roots its sessions name it by. */
export async function sweepRepository(
  store: SweepStore,
  repoRoot: string,
  repoSpellings: readonly string[],
  sessionIds: readonly string[],
  options: { dataDir: string; log: SweepLog },
): Promise<RepositorySweep> {
  const log = (level: 'info' | 'warn', line: string) => options.log(level, `${LOG_PREFIX} ${repoRoot}: ${line}`);
  const result: RepositorySweep = { repoRoot, plan: null, failure: null, collected: [], kept: [], pruned: false };
  const listed = await listWorktrees(repoRoot);
  if (!listed.ok) {
    result.failure = listed.error.message;
    log('warn', `skipped: ${listed.error.message}`);
    return result;
  }
  const refs = await runGit(['for-each-ref', '--format=%(refname:short)', 'refs/heads/rennet/'], { cwd: repoRoot });
  if (refs.code !== 0) {
    result.failure = `git could not list the rennet/* branches: ${refs.stderr.trim()}`;
    log('warn', `skipped: ${result.failure}`);
    return result;
  }
  const siblingBranches = refs.stdout
    .toString('utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);

  const sessions: SweepSession[] = sessionIds.map((id) => ({ id, live: !isArchived(store, id), binding: recordedBinding(store, id) }));
  const spellings: Record<string, string[]> = {};
  const spell = (p: string) => {
    if (p in spellings) return;
    const r = resolvedSpelling(p);
    spellings[p] = r ? [r] : [];
  };
  listed.value.forEach((w) => spell(w.path));
  sessions.forEach((s) => s.binding && spell(s.binding.root));
  const placementRoots = new Set<string>();
  for (const r of repoSpellings) {
    const root = placementRoot(options.dataDir, r);
    placementRoots.add(root);
    const resolved = resolvedSpelling(root);
    if (resolved) placementRoots.add(resolved);
  }

  const names = new Set(siblingBranches);
  for (const w of listed.value) if (w.branch?.startsWith('rennet/')) names.add(w.branch);
  const destinations = sessionIds.map((id) => recordedPushDestination(store, id)).filter((d) => d !== null);
  const reach: Record<string, SiblingReach> = {};
  for (const workBranch of names) {
    const extra = destinations.filter((d) => d.workBranch === workBranch).map((d) => `refs/remotes/${d.remote}/${d.branch}`);
    const answer = await reachOf(repoRoot, workBranch, workBranch.slice('rennet/'.length), extra);
    if (answer) reach[workBranch] = answer;
  }

  const plan = planSweep({ worktrees: listed.value, siblingBranches, sessions, placementRoots: [...placementRoots], spellings, reach });
  result.plan = plan;

  // Worktrees first (each removal git refuses keeps its branch), then the prune, then the branches.
  const branchesToDelete: Array<{ workBranch: string; tip: string; via: string; worktree: string | null }> = [];
  const afterPrune: typeof branchesToDelete = [];
  for (const verdict of plan.siblings) {
    if (verdict.action === 'keep') {
      result.kept.push({ workBranch: verdict.workBranch, worktree: verdict.worktree, reason: verdict.reason });
      log('info', `kept ${verdict.workBranch}${verdict.worktree ? ` and its worktree ${verdict.worktree}` : ''}: ${verdict.reason}`);
      continue;
    }
    const item = { workBranch: verdict.workBranch, tip: verdict.tip, via: shortRef(verdict.reachedVia), worktree: verdict.worktree };
    if (verdict.afterPrune) {
      afterPrune.push(item);
      continue;
    }
    if (verdict.worktree) {
      const removed = await runGit(['worktree', 'remove', verdict.worktree], { cwd: repoRoot });
      if (removed.code !== 0) {
        const reason = `git would not remove the worktree: ${gitWords(removed)}`;
        result.kept.push({ workBranch: verdict.workBranch, worktree: verdict.worktree, reason });
        log('warn', `kept ${verdict.workBranch} and its worktree ${verdict.worktree}: ${reason}`);
        continue;
      }
    }
    branchesToDelete.push(item);
  }

  if (plan.prune.action === 'prune') {
    const pruned = await runGit(['worktree', 'prune'], { cwd: repoRoot });
    if (pruned.code === 0) {
      result.pruned = true;
      log('info', `pruned the worktree registrations git cannot reach: ${plan.prune.paths.join(', ')}`);
      branchesToDelete.push(...afterPrune);
    } else {
      log('warn', `git worktree prune failed: ${gitWords(pruned)}`);
      for (const item of afterPrune) result.kept.push({ workBranch: item.workBranch, worktree: null, reason: 'git worktree prune failed, so its registration still has it out' });
    }
  } else if (plan.prune.action === 'hold') {
    log('warn', `no git worktree prune this pass; held by ${plan.prune.held.map((h) => `${h.path} (${h.reason})`).join('; ')}`);
  }

  for (const item of branchesToDelete) {
    const soft = await runGit(['branch', '-d', item.workBranch], { cwd: repoRoot });
    // -d asks whether HEAD (of whichever checkout) contains it; containment by the branch or its remote ref was proven.
    const hard = soft.code === 0 ? soft : await runGit(['branch', '-D', item.workBranch], { cwd: repoRoot });
    const where = item.worktree ? ` and its worktree ${item.worktree}` : '';
    if (hard.code !== 0) {
      const reason = `git would not delete the branch: ${gitWords(hard)}`;
      result.kept.push({ workBranch: item.workBranch, worktree: null, reason });
      log('warn', `${item.worktree ? `removed the worktree ${item.worktree}, but kept ${item.workBranch}` : `kept ${item.workBranch}`}: ${reason}`);
      continue;
    }
    result.collected.push(item.workBranch);
    log('info', `collected ${item.workBranch} (its tip ${item.tip.slice(0, 12)} is in ${item.via})${where}`);
  }
  return result;
}

/** The repository's shared git directory: a clone and its linked worktrees answer the same. Null when it is not a repository now. */
async function commonDir(root: string): Promise<string | null> {
  const r = await runGit(['rev-parse', '--path-format=absolute', '--git-common-dir'], { cwd: root });
  if (r.code !== 0) return null;
  const dir = r.stdout.toString('utf8').trim();
  try {
    return realpathSync(dir);
  } catch {
    return dir;
  }
}

/** The sweep over every repository the stored sessions name (sessions naming it through a linked worktree or another spelling are one repository). */
export async function sweepAtStart(store: SweepStore, options: { dataDir: string; log: SweepLog }): Promise<RepositorySweep[]> {
  const byRoot = new Map<string, string[]>();
  for (const s of store.listSessions()) byRoot.set(s.repoRoot, [...(byRoot.get(s.repoRoot) ?? []), s.id]);
  const repos = new Map<string, { spellings: string[]; sessions: string[] }>();
  for (const [root, ids] of byRoot) {
    const key = existsSync(root) ? await commonDir(root) : null;
    if (!key) {
      options.log('info', `${LOG_PREFIX} ${root}: skipped: no git repository is there now`);
      continue;
    }
    const repo = repos.get(key) ?? { spellings: [], sessions: [] };
    repo.spellings.push(root);
    repo.sessions.push(...ids);
    repos.set(key, repo);
  }
  const results: RepositorySweep[] = [];
  for (const repo of repos.values()) {
    const root = repo.spellings[0]!;
    try {
      results.push(await sweepRepository(store, root, repo.spellings, repo.sessions, options));
    } catch (error) {
      options.log('warn', `${LOG_PREFIX} ${root}: stopped: ${(error as Error).message}`);
      results.push({ repoRoot: root, plan: null, failure: (error as Error).message, collected: [], kept: [], pruned: false });
    }
  }
  const collected = results.reduce((n, r) => n + r.collected.length, 0);
  const kept = results.reduce((n, r) => n + r.kept.length, 0);
  const pruned = results.filter((r) => r.pruned).length;
  options.log(
    'info',
    `${LOG_PREFIX} done: ${results.length} repositor${results.length === 1 ? 'y' : 'ies'}, ${collected} sibling${collected === 1 ? '' : 's'} collected, ${kept} kept, ${pruned === 0 ? 'nothing pruned' : `pruned in ${pruned}`}`,
  );
  return results;
}

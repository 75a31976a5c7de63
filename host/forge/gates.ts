import { pullRequestLabel, type PullRequestRef } from '../../protocol/forge';
import { allGatesPass, mergeMethodsOf, type GatesReport, type MergeMethod, type MergeResult } from '../../protocol/gates';
import { err, ok, rennetError, type Result } from '../../protocol/result';
import { freshnessRefs, readFreshness } from './freshness';
import { adapterFor, forgeFailure, forgeRepoFor, type ForgeAccess } from './pullRequests';
import { sha7 } from './gateRules';
import type { ForgeAdapter } from './types';

/**
 * The merge gates of a request and its merge, for the CLI (`rennet gates`, `rennet merge`) and the
 * host's `rennet/gates/read` and `rennet/gates/merge`: the forge's gates (adapters' `readGates`),
 * the local copy's freshness (freshness.ts), and a merge that happens only when every gate passes
 * on the head the caller confirmed, pinned to it.
 */

async function adapterOf(access: ForgeAccess, repoRoot: string, target: PullRequestRef): Promise<Result<ForgeAdapter>> {
  const repo = await forgeRepoFor(repoRoot, target, access.registry);
  if (!repo.ok) return repo;
  return adapterFor(access, repo.value);
}

const labelOf = (target: PullRequestRef) => pullRequestLabel(target);

/** The request's gates read now, with the freshness of the local copy against the head they were read at. */
export async function readGatesReport(access: ForgeAccess, repoRoot: string, target: PullRequestRef): Promise<Result<GatesReport>> {
  const adapter = await adapterOf(access, repoRoot, target);
  if (!adapter.ok) return adapter;
  if (!adapter.value.readGates) return err(rennetError('invalid-request', `reading merge gates is not supported for ${target.provider}`));
  let read;
  try {
    read = await adapter.value.readGates(target.number);
  } catch (error) {
    return forgeFailure(error, `reading the merge gates of ${labelOf(target)} on ${target.host}`);
  }
  const refs = await freshnessRefs(repoRoot, target, read.headRef, access.registry);
  const freshness = await readFreshness(repoRoot, refs, read.head);
  return ok({ provider: target.provider, number: target.number, head: read.head, headRef: read.headRef, baseRef: read.baseRef, state: read.state, freshness, gates: read.gates });
}

/**
 * Merges the request by `method`, pinned to `expectHead`. The gates are read again first: a head
 * that is not `expectHead` is refused (`head-moved`), and so is any gate that does not pass
 * (`gates-blocked`, naming each); then the adapter merges pinned to the head (a head that moves
 * during the call comes back from the forge as the same `head-moved` refusal). Nothing is merged
 * on a refusal.
 */
export async function mergeWhenGatesPass(access: ForgeAccess, repoRoot: string, target: PullRequestRef, options: { expectHead: string; method: MergeMethod }): Promise<Result<MergeResult>> {
  const label = labelOf(target);
  if (!mergeMethodsOf(target.provider).includes(options.method)) {
    return err(
      rennetError(
        'invalid-request',
        `${target.provider === 'gitlab' ? 'GitLab merges by the project’s merge method; per request it takes' : 'GitHub takes'} ${mergeMethodsOf(target.provider).join(' or ')}, not ${options.method}; nothing was merged`,
      ),
    );
  }
  const adapter = await adapterOf(access, repoRoot, target);
  if (!adapter.ok) return adapter;
  if (!adapter.value.readGates || !adapter.value.merge) return err(rennetError('invalid-request', `merging is not supported for ${target.provider}`));
  let read;
  try {
    read = await adapter.value.readGates(target.number);
  } catch (error) {
    return forgeFailure(error, `reading the merge gates of ${label} on ${target.host}`);
  }
  if (read.head !== options.expectHead) {
    return err(
      rennetError('head-moved', `${label}'s head is ${sha7(read.head)}, not the expected ${sha7(options.expectHead)}: it moved since its gates were read; read them again; nothing was merged`, {
        head: read.head,
        expected: options.expectHead,
      }),
    );
  }
  const blocking = read.gates.filter((g) => g.state !== 'pass');
  if (read.state !== 'open' || !allGatesPass(read.gates)) {
    const why = read.state !== 'open' ? `it is ${read.state}` : blocking.map((g) => `${g.name} ${g.state === 'pending' ? 'is pending' : 'fails'} (${g.detail})`).join('; ');
    return err(rennetError('gates-blocked', `${label} is not merged: ${why}; nothing was merged`, { gates: blocking.map((g) => g.name).join(',') }));
  }
  try {
    const merged = await adapter.value.merge(target.number, options);
    return ok({ provider: target.provider, number: target.number, merged: true, head: options.expectHead, method: options.method, sha: merged.sha, url: merged.url });
  } catch (error) {
    return forgeFailure(error, `merging ${label} on ${target.host}`);
  }
}

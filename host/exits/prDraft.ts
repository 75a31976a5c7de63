import { createHash } from 'node:crypto';
import { GITHUB_REVIEW_BODY_MAX_CHARS } from '../../protocol/exits';
import type { ForgeProvider } from '../../protocol/exits';
import type { GenerationSnapshot } from '../../protocol/review';
import { canonicalJson } from '../capture/ids';

/**
 * PURE (hashing aside). The title and description of one's own pull or merge request, drafted from
 * what the branch holds: its commits and, when it was reviewed, its boards (the Design overview,
 * the Sequence's steps, the Decisions). Deterministic: the same commits and boards draft the same
 * text, so an unchanged draft keeps its composition id. A reviewer's edit wins over the draft.
 */

export interface BranchCommit {
  sha: string;
  subject: string;
}

export interface PullRequestDraftInput {
  branch: string;
  base: string;
  /** base..branch, oldest first. */
  commits: readonly BranchCommit[];
  /** The branch review's current generation, when there is one. */
  generation: GenerationSnapshot | null;
  /** What the reviewer wrote over the draft (either part), if anything. */
  edit?: { title?: string; body?: string } | null;
}

export interface PullRequestDraft {
  title: string;
  body: string;
  /** Where the text came from, for the preview: `commits`, `design`, `sequence`, `decisions`, `edited`. */
  sources: string[];
}

/** Longest title drafted (GitHub allows 256). */
export const PR_TITLE_MAX_CHARS = 256;
/** Items one list of the description carries before saying how many more there are. */
export const PR_LIST_MAX_ITEMS = 12;

export function draftPullRequest(input: PullRequestDraftInput): PullRequestDraft {
  const sources: string[] = [];
  const lanes = new Map((input.generation?.lanes ?? []).filter((l) => l.state === 'settled' && l.board).map((l) => [l.lens, l.board!]));
  const design = lanes.get('design');
  const sequence = lanes.get('sequence');
  const decisions = lanes.get('decisions');

  let title = input.edit?.title?.trim() ?? '';
  if (title) sources.push('edited');
  else if (input.commits.length === 1) title = (input.commits[0] as BranchCommit).subject;
  else if (design?.document.title) title = design.document.title;
  else title = humanize(input.branch);
  title = oneLine(title).slice(0, PR_TITLE_MAX_CHARS);

  const edited = input.edit?.body;
  if (edited !== undefined && edited.trim() !== '') {
    if (!sources.includes('edited')) sources.push('edited');
    return { title, body: edited.replace(/\r\n?/g, '\n').slice(0, GITHUB_REVIEW_BODY_MAX_CHARS), sources };
  }
  const parts: string[] = [];
  const intro = design?.document.intro_markdown?.trim();
  if (intro) {
    parts.push(intro);
    sources.push('design');
  }
  const steps = (sequence?.elements ?? []).filter((e) => e.kind === 'order_step').map((e) => oneLine(String((e as { title?: unknown }).title ?? '')));
  // The host's own chapters (a round's "Round N · Addressed") narrate the review, not the change.
  const stepTitles =
    steps.length > 0
      ? steps
      : (sequence?.elements ?? []).filter((e) => e.kind === 'section' && e.parent === null && e.author !== 'host').map((e) => oneLine(String((e as { title?: unknown }).title ?? '')));
  if (stepTitles.filter(Boolean).length > 0) {
    parts.push(`## Changes\n\n${list(stepTitles.filter(Boolean))}`);
    sources.push('sequence');
  }
  const choices = (decisions?.elements ?? []).filter((e) => e.kind === 'decision').map((e) => oneLine(String((e as { title?: unknown }).title ?? '')));
  if (choices.filter(Boolean).length > 0) {
    parts.push(`## Decisions\n\n${list(choices.filter(Boolean))}`);
    sources.push('decisions');
  }
  if (input.commits.length > 1 || parts.length === 0) {
    parts.push(`## Commits\n\n${list(input.commits.map((c) => `${c.subject} (${c.sha.slice(0, 7)})`))}`);
    sources.push('commits');
  }
  const body = parts.join('\n\n').slice(0, GITHUB_REVIEW_BODY_MAX_CHARS);
  return { title, body, sources };
}

/** The composition id of an open-request submission: bound to the destination, the branches and the exact text. */
export function pullRequestCompositionId(parts: { provider: ForgeProvider; host: string; owner: string; repo: string; branch: string; base: string; title: string; body: string }): string {
  return createHash('sha256')
    .update(canonicalJson({ scheme: 'rennet-pr/1', ...parts }))
    .digest('hex');
}

function list(items: readonly string[]): string {
  const shown = items.slice(0, PR_LIST_MAX_ITEMS).map((i) => `- ${i}`);
  if (items.length > PR_LIST_MAX_ITEMS) shown.push(`- … and ${items.length - PR_LIST_MAX_ITEMS} more`);
  return shown.join('\n');
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** `feat/retry-uploads` → `Retry uploads`. */
export function humanize(branch: string): string {
  const last = branch.split('/').at(-1) ?? branch;
  const words = last.replace(/[-_.]+/g, ' ').trim();
  return words ? words[0]!.toUpperCase() + words.slice(1) : branch;
}

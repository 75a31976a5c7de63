import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { z } from 'zod';
import { GITHUB_REVIEW_BODY_MAX_CHARS } from '../../protocol/exits';
import type { PrPolish } from '../../protocol/exits';
import { RESULT_MAX_BYTES } from '../../protocol/board';
import type { Patchset } from '../../protocol/patchset';
import { PROMPT_FILES } from '../../prompts/generated';
import { PR_OPENER_PROMPT, PROMPTS_VERSION } from '../../prompts/manifest';
import { checkToolCall, oneTurnSpend, readsText, runOneTurn } from '../pipeline/oneTurn';
import { renderInputSchema, type JsonSchemaObject } from '../board/tools';
import { canonicalJson } from '../capture/ids';
import { CONTEXT_ROOT } from '../pipeline/contextDir';
import type { SeatSpec } from '../pipeline/ports';
import { withReadTools } from '../read/compose';
import { gitChangeSource } from '../read/gitSource';
import { seatWorkingDir } from '../read/headWorkspace';
import { readSurface } from '../read/tools';
import type { LensHarness } from '../harness/harnessConfig';
import { PR_TITLE_MAX_CHARS, type BranchCommit, type PullRequestDraft } from './prDraft';

/**
 * The model-polished title and description of one's own pull or merge request. One turn of the
 * Design lens's harness rewrites the deterministic draft (prDraft.ts): the draft and the commit
 * subjects reach it only through `read_draft`, the change through the read tools every seat gets,
 * and it hands in the text with `set_title` and `set_description`. Nothing of the branch is
 * interpolated into the prompt.
 *
 * The text is content-addressed by its evidence (`polishEvidenceId`: the branch and base, the
 * commits, the generation whose boards fed the draft, the draft itself, the harness and model, the
 * prompts' version). It is kept on the branch's review session (`pr.polished` events): unchanged
 * evidence answers the stored bytes — across previews, a reload and a host restart — so the
 * composition id that Open binds to stays the same; changed evidence polishes again. A failed or
 * refused turn leaves the deterministic draft, said as such; it is never cached.
 *
 * A CLI opener (Claude Code, Codex) runs in a snapshot of the capture's head under the data
 * directory (host/read/headWorkspace.ts), never the user's checkout. The turn's spend — its reads
 * of the change included — rides on the `pr.polished` event it writes, and goes to the log either way.
 */

/** The session event a polished title and description are kept under. */
export const PR_POLISHED_EVENT_KIND = 'pr.polished';
/** The one turn's deadline. */
export const PR_POLISH_TURN_TIMEOUT_MS = 5 * 60_000;

export const READ_DRAFT = 'read_draft';
export const SET_TITLE = 'set_title';
export const SET_DESCRIPTION = 'set_description';

/** The opener's whole prompt: a header the harness servers can route by, then prompts/pr-opener.md. */
export function prOpenerPrompt(): string {
  return `# Rennet: Design (pull request)\n\n${PROMPT_FILES[PR_OPENER_PROMPT.file].replace(/\s+$/, '')}\n`;
}

export interface PolishEvidence {
  branch: string;
  base: string;
  commits: readonly BranchCommit[];
  /** The generation whose boards the draft read (null: drafted from commits alone). */
  generationId: string | null;
  patchsetId: string;
  draft: { title: string; body: string };
  harness: { kind: string; model: string | null };
}

/** SHA-256 (hex) of the canonical evidence, the prompt's text and version included. */
export function polishEvidenceId(evidence: PolishEvidence): string {
  const prompt = createHash('sha256').update(prOpenerPrompt()).digest('hex');
  return createHash('sha256')
    .update(canonicalJson({ scheme: 'rennet-pr-polish/1', promptsVersion: PROMPTS_VERSION, prompt, ...evidence, commits: evidence.commits.map((c) => ({ sha: c.sha, subject: c.subject })) }))
    .digest('hex');
}

// ─── The tool surface (pure) ─────────────────────────────────────────────────────────────────

export interface PolishTool {
  name: string;
  description: string;
  inputSchema: JsonSchemaObject;
  zod: z.ZodObject;
}

export interface PolishSurface {
  readonly tools: readonly PolishTool[];
  call(name: string, input: unknown): { text: string; isError: boolean };
  readonly title: string | null;
  readonly description: string | null;
  stats(): { calls: number; refusals: number };
}

const TOOLS: readonly PolishTool[] = [
  polishTool(READ_DRAFT, 'Read the drafted title and description and the branch’s commit subjects (oldest first), as JSON. Call it first.', z.strictObject({})),
  polishTool(
    SET_TITLE,
    `Hand in the pull request's title: one line, at most ${PR_TITLE_MAX_CHARS} characters. Call it once; a second call replaces the first.`,
    z.strictObject({ title: z.string().min(1).describe('The title, one line.') }),
  ),
  polishTool(
    SET_DESCRIPTION,
    `Hand in the pull request's description as Markdown (at most ${GITHUB_REVIEW_BODY_MAX_CHARS} characters). Call it once; a second call replaces the first.`,
    z.strictObject({ markdown: z.string().min(1).describe('The description, in Markdown.') }),
  ),
];

function polishTool(name: string, description: string, zod: z.ZodObject): PolishTool {
  return { name, description, inputSchema: renderInputSchema(zod), zod };
}

/** A title as the opener hands it in, checked: one line of printable text within the limit; null with why when refused. */
export function checkTitle(raw: string): { ok: true; title: string } | { ok: false; why: string } {
  const title = raw.trim();
  if (!title) return { ok: false, why: 'the title is blank' };
  if (/[\r\n]/.test(title)) return { ok: false, why: 'the title must be one line' };
  if (/[\u0000-\u001f\u007f]/.test(title)) return { ok: false, why: 'the title holds control characters' };
  if (title.length > PR_TITLE_MAX_CHARS) return { ok: false, why: `the title is ${title.length} characters; at most ${PR_TITLE_MAX_CHARS}` };
  return { ok: true, title };
}

export function checkDescription(raw: string): { ok: true; markdown: string } | { ok: false; why: string } {
  const markdown = raw.replace(/\r\n?/g, '\n').replace(/\s+$/, '');
  if (!markdown.trim()) return { ok: false, why: 'the description is blank' };
  if (markdown.length > GITHUB_REVIEW_BODY_MAX_CHARS) return { ok: false, why: `the description is ${markdown.length} characters; at most ${GITHUB_REVIEW_BODY_MAX_CHARS}` };
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(markdown)) return { ok: false, why: 'the description holds control characters' };
  return { ok: true, markdown };
}

export function polishSurface(subject: { draft: { title: string; body: string }; commits: readonly BranchCommit[] }): PolishSurface {
  let title: string | null = null;
  let description: string | null = null;
  let calls = 0;
  let refusals = 0;
  const refuse = (text: string) => {
    refusals++;
    return { text, isError: true };
  };
  return {
    tools: TOOLS,
    get title() {
      return title;
    },
    get description() {
      return description;
    },
    stats: () => ({ calls, refusals }),
    call(name, input) {
      calls++;
      const call = checkToolCall(TOOLS, name, input, 'nothing was recorded');
      if (!call.ok) return refuse(call.text);
      const value = call.value as Record<string, string>;
      if (name === READ_DRAFT) {
        const text = JSON.stringify({ title: subject.draft.title, description: subject.draft.body, commits: subject.commits.map((c) => c.subject) }, null, 1);
        return { text: text.length > RESULT_MAX_BYTES ? `${text.slice(0, RESULT_MAX_BYTES - 80)}\n[cut: the draft is longer than one tool result]` : text, isError: false };
      }
      if (name === SET_TITLE) {
        const checked = checkTitle(value.title ?? '');
        if (!checked.ok) return refuse(`The title was not recorded: ${checked.why}.`);
        title = checked.title;
        return { text: `The title is recorded (${title.length} characters).${description === null ? ` Now hand in the description with ${SET_DESCRIPTION}.` : ' End your turn now.'}`, isError: false };
      }
      const checked = checkDescription(value.markdown ?? '');
      if (!checked.ok) return refuse(`The description was not recorded: ${checked.why}.`);
      description = checked.markdown;
      return { text: `The description is recorded (${description.length} characters).${title === null ? ` Now hand in the title with ${SET_TITLE}.` : ' End your turn now.'}`, isError: false };
    },
  };
}

// ─── The turn, and its cache ─────────────────────────────────────────────────────────────────

export interface PolishStore {
  /** The data directory: a CLI opener's head snapshot is written under it. */
  readonly dir: string;
  appendEvent(sessionId: string, kind: string, payload: unknown, now: string): unknown;
  readEvents(sessionId: string): Array<{ kind: string; payload: unknown }>;
}

const Polished = z.object({ evidenceId: z.string(), title: z.string(), body: z.string(), harness: z.string(), model: z.string().nullable() });

export interface PolishRequest {
  /** The branch's review session (the cache lives on it) and its capture (what the read tools read). */
  sessionId: string;
  repoRoot: string;
  patchset: Patchset;
  generationId: string | null;
  branch: string;
  base: string;
  commits: readonly BranchCommit[];
  draft: PullRequestDraft;
}

export interface PolishDeps {
  store: PolishStore;
  /** The Design lens's harness under the reviewer's configuration (null harness: none configured). */
  harness(signal: AbortSignal): Promise<LensHarness>;
  timeoutMs?: number;
  now?: () => string;
  log?(level: 'info' | 'warn', message: string): void;
}

/** Polishes `request.draft`, or answers the stored polish of the same evidence. Never throws. */
export async function polishDraft(deps: PolishDeps, request: PolishRequest, signal?: AbortSignal): Promise<{ title: string; body: string; polish: PrPolish }> {
  const draft = { title: request.draft.title, body: request.draft.body };
  const abort = new AbortController();
  let timedOut = false;
  const onAbort = () => abort.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(() => {
    timedOut = true;
    abort.abort();
  }, deps.timeoutMs ?? PR_POLISH_TURN_TIMEOUT_MS);
  try {
    let chosen: LensHarness;
    try {
      chosen = await deps.harness(abort.signal);
    } catch (error) {
      return { ...draft, polish: { state: 'failed', harness: null, model: null, message: `the harness configuration could not be used: ${(error as Error).message}` } };
    }
    const harness = chosen.harness;
    if (!harness) return { ...draft, polish: { state: 'off', reason: 'no harness is configured for the Design lens (rennet.harness.default or rennet.harness.lenses.design)' } };
    const who = { harness: harness.kind, model: harness.model };
    const evidenceId = polishEvidenceId({
      branch: request.branch,
      base: request.base,
      commits: request.commits,
      generationId: request.generationId,
      patchsetId: request.patchset.id,
      draft,
      harness: { kind: harness.kind, model: harness.model },
    });
    const stored = deps.store
      .readEvents(request.sessionId)
      .filter((e) => e.kind === PR_POLISHED_EVENT_KIND)
      .map((e) => Polished.safeParse(e.payload))
      .find((p) => p.success && p.data.evidenceId === evidenceId);
    if (stored?.success) return { title: stored.data.title, body: stored.data.body, polish: { state: 'polished', ...who, evidenceId, reused: true } };

    const surface = polishSurface({ draft, commits: request.commits });
    const served = withReadTools(surface, readSurface(gitChangeSource({ repoDir: request.repoRoot, patchset: request.patchset, contextDir: join(CONTEXT_ROOT, request.sessionId) })));
    const seat: SeatSpec = { seatId: 'design:pr-opener', lens: 'design', role: 'reviewer' };
    const by = `${harness.kind}${harness.model ? ` (${harness.model})` : ''}`;
    const cwd = await seatWorkingDir(harness.kind, deps.store.dir, request.repoRoot, request.patchset);
    if (cwd.note) deps.log?.('warn', `pull request polish by ${by} runs in ${request.repoRoot}: ${cwd.note}`);
    const started = performance.now();
    const turn = await runOneTurn(harness, { seat, prompt: prOpenerPrompt(), cwd: cwd.dir, surface: served, signal: abort.signal });
    const spend = oneTurnSpend(seat, harness, turn, performance.now() - started, served.stats());
    deps.log?.('info', `pull request polish by ${by}: spend ${JSON.stringify(spend)} (${readsText(spend)} of the change)`);
    const { title, description } = surface;
    if (title === null || description === null) {
      const missing = [title === null ? SET_TITLE : null, description === null ? SET_DESCRIPTION : null].filter(Boolean).join(' and ');
      const why =
        turn.outcome === 'aborted' || abort.signal.aborted
          ? timedOut
            ? `it did not finish within ${Math.round((deps.timeoutMs ?? PR_POLISH_TURN_TIMEOUT_MS) / 1000)} s`
            : 'it was cancelled'
          : turn.outcome === 'failed'
            ? (turn.message ?? 'it failed without saying why')
            : `it ended its turn without ${missing} (${spend.toolCalls} tool calls, ${spend.refusals} refused; ${readsText(spend)} of the change)`;
      deps.log?.('warn', `pull request polish by ${by}: ${why}; the draft stands`);
      return { ...draft, polish: { state: 'failed', ...who, message: why } };
    }
    deps.store.appendEvent(
      request.sessionId,
      PR_POLISHED_EVENT_KIND,
      { evidenceId, title, body: description, harness: harness.kind, model: harness.model, spend },
      (deps.now ?? (() => new Date().toISOString()))(),
    );
    return { title, body: description, polish: { state: 'polished', ...who, evidenceId, reused: false } };
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

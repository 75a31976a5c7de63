import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { LENSES, type Lens } from '../protocol/board';
import type { Patchset } from '../protocol/patchset';
import type { RennetError, Result } from '../protocol/result';
import type { CaptureTarget, Session, Target } from '../protocol/session';
import { buildCitationIndex } from './board/citations';
import { startSeatServer } from './board/mcpServer';
import { BoardSeat, openDraftingBoard } from './board/seat';
import { buildBoardTools, toolListing } from './board/tools';
import { formatPatchsetSummary } from './format';
import { normalizeJsonFlag } from './review/args';
import { checkOutputPath, ReviewRefusal, runReview } from './review/command';
import { HarnessChoiceError, HarnessLoadError, loadHarnessAssignment, parseHarnessChoice } from './harness/harnessChoice';
import { reviewDeps } from './review/seams';
import type { HarnessAssignment } from './pipeline/types';
import { resolveStoreDir } from './storeDir';
import { captureCommand } from './cliCapture';
import { ReviewService } from './service';
import { branchSession, cliRoundContext, cliRoundRunner, roundJson, workerFromFlag } from './cliRounds';
import { cliAsk, cliForges, cliGates, cliMerge, cliPostReview, cliPublisher, gatesText, pullRequestSession, reportTargetOf, type CliAskInput, type VerdictFlag } from './cliForge';
import { MergeMethod } from '../protocol/gates';
import { pullRequestContext } from './forge/context';
import type { Harness } from './pipeline/ports';
import { branchOpenPrInput, openPullRequest, previewPullRequest } from './exits/openPr';
import { currentBranch, openRepo } from './capture/repo';
import { foldRounds, ledgerRows } from './rounds/ledger';
import { landingFor, landWorkBranch } from './rounds/landing';
import { archiveSession, sessionPatchsetIds } from './rounds/archive';
import { ROUNDS_WORKSPACE_DEFAULT, RoundsWorkspaceMode } from '../protocol/rounds';
import { currentGenerationId } from './generation/generationSnapshot';
import type { AskIntent } from '../protocol/asks';
import type { Side } from '../protocol/patchset';
import { Store } from './store';
import { AskLog } from './asks/log';
import { carryForwardOpenAsks, fileDeltaPatchset, planRereview, priorReviewOf, recordRereview, rereviewDeltaOf, type RereviewPlan } from './rereview/run';
import { CONTEXT_ROOT } from './pipeline/contextDir';
import type { ReviewReport } from '../protocol/review';
import { HOST_VERSION } from './version';
import { EVAL_USAGE, EvalUsageError, evalCli } from './eval/cli';

/**
 * `rennet` — the same host code in-process, for terminals and CI.
 * Exit codes: 0 success, 1 refused (the message on stderr), 2 usage error.
 */
const USAGE = `Usage:
  rennet review  --repo DIR [--base REF] [--head REF | --working-tree]
                 [--harness NAME [--base-url URL] [--model NAME]] [--json FILE] [--html FILE]
  rennet review  --repo DIR [--base REF] [--head REF | --working-tree] --json
  rennet review  --repo DIR --pr N|URL [--since-last-review] [--harness NAME ...] [--json FILE] [--html FILE]
  rennet ask     --repo DIR (--pr N | --branch B [--base B]) --intent comment|request-change|question
                 [--path P --line L [--end-line E] [--side head|base]] --text T [--json]
  rennet post-review --repo DIR --pr N [--verdict approve|comment|request-changes]
                 [--dry-run] [--expect-composition ID] [--json]
  rennet open-pr --repo DIR [--branch B] [--base B] [--title T] [--body TEXT]
                 [--harness NAME ...] [--dry-run] [--expect-composition ID] [--json]
  rennet eval    corpus|run|score|compare ...   (rennet eval --help)
  rennet gates   --repo DIR --pr N [--json]
  rennet merge   --repo DIR --pr N --expect-head SHA [--method merge|squash|rebase] [--json]
  rennet round   --repo DIR ([--branch B] [--base B] | --pr N) --worker claude-code|codex|scripted:FILE
                 [--workspace share|own] [--harness NAME ...] [--retry] [--json [FILE]]
  rennet rounds  --repo DIR ([--branch B] [--base B] | --pr N) --json
  rennet land    --repo DIR ([--branch B] [--base B] | --pr N) [--json]
  rennet archive --repo DIR ([--branch B] [--base B] | --pr N) [--json]
  rennet capture --repo DIR --base REF (--head REF | --working-tree) [--json]
  rennet tools   --lens LENS [--json]
  rennet seat-server --repo DIR --base REF (--head REF | --working-tree) --lens LENS [--author NAME]
  rennet --version | --help

Options:
  --repo DIR           the repository (a normal or bare repository; bare needs --head)
  --base REF           compare against this ref (review: default origin/HEAD's branch, then main, master)
  --head REF           the commit-ish under review (review: default the current branch)
  --working-tree       review uncommitted and untracked files of the current branch
  --max-file-bytes N   capture files larger than N bytes truncated (default 1048576)
  --store DIR          the data directory (default $RENNET_DATA_DIR or the platform's data directory)
  --harness NAME       who drafts the lens boards (review), or polishes the drafted title and
                       description (open-pr: the Design lens's harness, reading the
                       branch's review; without it the text is drafted deterministically): auto (default: the Claude Code and
                       Codex CLIs installed here, with your own login; with none, a
                       tool-calling model of Ollama or LM Studio on this machine), claude-code, codex,
                       openai, anthropic (an HTTP API: --base-url, --model, key from
                       OPENAI_API_KEY / ANTHROPIC_API_KEY, optional on loopback), none, or
                       scripted:FILE (play a recorded script of tool calls per seat).
                       vscode-lm runs inside VS Code only.
  --base-url URL       the API endpoint for --harness openai|anthropic (default: the vendor's)
  --model NAME         the model for --harness openai|anthropic (required) or a CLI harness
  --json FILE          review: write the review report to FILE (docs/review-json.md)
  --html FILE          review: write the review as one self-contained HTML page to FILE
  --json               with no FILE: print JSON and stop (capture: the whole patchset;
                       review: the session snapshot, without running the lenses;
                       tools: the tool list exactly as a seat server serves it)
  --lens LENS          design, sequence, decisions, flagged or noise
  --author NAME        who the seat is, stamped on what it writes (seat-server; default "seat")
  --pr N|URL           a pull or merge request of the repository's forge (the push remote of the
                       current branch): its number (12, #12, !7) or URL. Forges: github.com,
                       gitlab.com and those in RENNET_FORGES; tokens from GITHUB_TOKEN / GH_TOKEN /
                       GITLAB_TOKEN, else the gh / glab CLIs (docs/forges.md). ask, round, rounds,
                       land, archive: the request's review (review --pr made it); rounds run only on
                       your own request, committing on its head branch, which must be a branch here
  --since-last-review  review --pr: read only what changed since your earlier review of the request
                       (a fix delta when its commit is an ancestor of the head; the whole change
                       after a force push or rebase, said), and judge each of its items resolved,
                       with the changed lines that show it, or open; the report gains delta and
                       priorItems, and the next post-review opens with "Prior review: k of n resolved"
  --intent I           ask: comment, request-change or question
  --path P, --line L, --end-line E, --side S
                       ask: the changed lines it is about (inside one hunk); none: a general ask
  --text T             ask: what the reviewer says
  --verdict V          post-review: approve, comment or request-changes (kept as the review's
                       verdict override, as the preview's control does)
  --dry-run            post-review: print the exact review that would post; send nothing
  --expect-composition ID
                       post-review / open-pr: refuse unless it composes to this id (a dry run's)
  --expect-head SHA    merge: the request's head the merge is pinned to (the head \`gates\` printed);
                       merge refuses (exit 3, nothing merged) unless it is the head and every
                       gate passes
  --method M           merge: merge (default), squash or rebase (GitLab: merge or squash)
  --branch B           open-pr: the branch to open a request for (default: the current branch)
  --title T, --body TEXT
                       open-pr: the request's title / description (default: drafted from the
                       branch's commits and, when it was reviewed, its boards)
  --workspace W        round: how the review's first round takes its workspace (share, the
                       default: the checkout that has the branch out; own: beside a checkout
                       Rennet did not place, a sibling branch rennet/<branch> in its own worktree)

land fast-forwards the branch to the review's sibling (git merge --ff-only rennet/<branch>, in the
checkout that has the branch out); git's refusal is printed as git said it and exits 3. archive
marks the branch's review archived and removes its sibling (worktree and branch) only when the
branch, or a remote's ref of it, contains the sibling's tip.

review captures the range (as capture does, into a session), prints the capture, then runs
the five lenses (Design, Sequence, Decisions, Flagged, Noise) with a progress line per lane
on stderr, and prints each board's title, state and counts. It exits 0 when the lenses ran,
whatever each lane settled as (settled, absent, or a failure it names).

seat-server captures the range, opens a drafting board for LENS (noise: with one host-placed
member per captured hunk), and serves that lens's board tools over MCP (Streamable HTTP) on
127.0.0.1. It prints one JSON line {"url", "headers"} (every request must carry those headers),
serves until stdin closes or SIGTERM, then prints the board as one JSON line and exits 0.
See docs/seat-server.md.
`;

class UsageError extends Error {}

const OPTIONS = {
  repo: { type: 'string' },
  base: { type: 'string' },
  head: { type: 'string' },
  'working-tree': { type: 'boolean', default: false },
  'max-file-bytes': { type: 'string' },
  store: { type: 'string' },
  /** Optional value (normalizeJsonFlag): '' is the flag, anything else review's report file. */
  json: { type: 'string' },
  harness: { type: 'string' },
  'base-url': { type: 'string' },
  model: { type: 'string' },
  html: { type: 'string' },
  lens: { type: 'string' },
  author: { type: 'string' },
  pr: { type: 'string' },
  intent: { type: 'string' },
  path: { type: 'string' },
  line: { type: 'string' },
  'end-line': { type: 'string' },
  side: { type: 'string' },
  text: { type: 'string' },
  verdict: { type: 'string' },
  'dry-run': { type: 'boolean', default: false },
  'expect-composition': { type: 'string' },
  'expect-head': { type: 'string' },
  method: { type: 'string' },
  branch: { type: 'string' },
  worker: { type: 'string' },
  workspace: { type: 'string' },
  retry: { type: 'boolean', default: false },
  'since-last-review': { type: 'boolean', default: false },
  title: { type: 'string' },
  body: { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
  version: { type: 'boolean', short: 'v', default: false },
} as const;

const VALUE_OPTIONS = new Set(
  Object.entries(OPTIONS)
    .filter(([, o]) => o.type === 'string')
    .map(([name]) => name),
);

async function main(argv: string[]): Promise<number> {
  // `eval` has its own sub-commands and flags (host/eval/cli.ts).
  if (argv[0] === 'eval') return evalCli(argv.slice(1));
  const { values: parsed, positionals } = parseArgs({
    args: normalizeJsonFlag(argv, VALUE_OPTIONS),
    allowPositionals: true,
    strict: true,
    options: OPTIONS,
  });
  const jsonFile = parsed.json ? parsed.json : null;
  const values = { ...parsed, json: parsed.json !== undefined && jsonFile === null };
  if (values.version) {
    process.stdout.write(`rennet ${HOST_VERSION}\n`);
    return 0;
  }
  const command = positionals[0];
  if (values.help || !command) {
    process.stdout.write(USAGE);
    return values.help ? 0 : 2;
  }
  if (!['review', 'capture', 'tools', 'seat-server', 'ask', 'post-review', 'open-pr', 'gates', 'merge', 'round', 'rounds', 'land', 'archive'].includes(command))
    throw new UsageError(`unknown command "${command}"`);
  if (command === 'gates' || command === 'merge') {
    if (jsonFile !== null) throw new UsageError(`--json takes no FILE on ${command} (it prints to stdout)`);
    return gatesCli(command, values, positionals);
  }
  if (values['expect-head'] !== undefined || values.method !== undefined) throw new UsageError(`--expect-head and --method are options of merge, not ${command}`);
  if (command === 'round' || command === 'rounds' || command === 'land' || command === 'archive') return roundsCli(command, values, jsonFile);
  if (values.workspace !== undefined) throw new UsageError(`--workspace is not an option of ${command}`);
  if (command === 'ask' || command === 'post-review') return forgeCli(command, values);
  if (command === 'open-pr') return openPrCli(values);
  for (const flag of ['intent', 'path', 'line', 'end-line', 'side', 'text', 'verdict', 'expect-composition', 'branch', 'title', 'body'] as const) {
    if (values[flag] !== undefined) throw new UsageError(`--${flag} is not an option of ${command}`);
  }
  if (values['dry-run']) throw new UsageError(`--dry-run is not an option of ${command}`);
  if (values.pr !== undefined && command !== 'review') throw new UsageError(`--pr is not an option of ${command}`);
  if (values['since-last-review'] && (command !== 'review' || values.pr === undefined)) throw new UsageError('--since-last-review re-reviews a request: use it with review --pr N');
  if (values.pr !== undefined && (values.head !== undefined || values['working-tree'] || values.base !== undefined)) {
    throw new UsageError('--pr names the request; its head and base come from the forge (no --head, --base or --working-tree)');
  }
  if (positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}"`);
  const lensCommand = command === 'tools' || command === 'seat-server';
  if (!lensCommand && values.lens !== undefined) throw new UsageError(`--lens is not an option of ${command}`);
  if (command !== 'seat-server' && values.author !== undefined) throw new UsageError(`--author is not an option of ${command}`);
  for (const flag of ['harness', 'html', 'base-url', 'model'] as const) {
    if (command !== 'review' && values[flag] !== undefined) throw new UsageError(`--${flag} is not an option of ${command}`);
  }
  if (command !== 'review' && jsonFile !== null) throw new UsageError(`--json takes no FILE on ${command} (it prints to stdout)`);
  if (command === 'review' && values.json && (values.harness !== undefined || values.html !== undefined)) {
    throw new UsageError('--json without FILE prints the session and runs no lenses; pass --json FILE to write the review report');
  }
  if (values.html === '') throw new UsageError('--html needs a FILE');
  let lens: Lens | undefined;
  if (lensCommand) {
    if (!values.lens) throw new UsageError(`${command} needs --lens LENS (${LENSES.join(', ')})`);
    if (!(LENSES as readonly string[]).includes(values.lens)) throw new UsageError(`unknown lens "${values.lens}" (one of ${LENSES.join(', ')})`);
    lens = values.lens as Lens;
  }
  if (command === 'tools') {
    writeOut(values.json ? JSON.stringify(toolListing(buildBoardTools(lens as Lens)), null, 2) : toolsText(lens as Lens));
    return 0;
  }
  if (!values.repo) throw new UsageError('--repo DIR is required');
  if (values.head && values['working-tree']) throw new UsageError('--head and --working-tree exclude each other');
  let maxFileBytes: number | undefined;
  if (values['max-file-bytes'] !== undefined) {
    maxFileBytes = Number(values['max-file-bytes']);
    if (!Number.isInteger(maxFileBytes) || maxFileBytes < 1) throw new UsageError('--max-file-bytes must be a positive integer');
  }

  // Review's lens run: everything it needs from the command line is checked before anything is captured.
  let harnesses: HarnessAssignment | null = null;
  if (command === 'review' && !values.json) {
    try {
      const harnessFlags = { baseUrl: values['base-url'], model: values.model };
      // auto says what it found (CLIs, local model servers and their models) and what drafts, on stderr.
      const report = (lines: string[]) => process.stderr.write(`${lines.join('\n')}\n`);
      harnesses = await loadHarnessAssignment(parseHarnessChoice(values.harness, harnessFlags), harnessFlags, { report });
      if (jsonFile !== null) checkOutputPath(jsonFile, '--json');
      if (values.html !== undefined) checkOutputPath(values.html, '--html');
    } catch (error) {
      if (error instanceof HarnessChoiceError) throw new UsageError(error.message);
      if (error instanceof HarnessLoadError || error instanceof ReviewRefusal) return refuse({ code: 'invalid-request', message: error.message });
      throw error;
    }
  }

  const storeArgs = values.store ? ['--store', values.store] : [];
  if (command === 'capture') {
    if (!values.base) throw new UsageError('capture needs --base REF');
    if (!values.head && !values['working-tree']) throw new UsageError('capture needs --head REF or --working-tree');
    const target: CaptureTarget = values['working-tree'] ? { kind: 'working-tree', base: values.base } : { kind: 'branch', head: values.head as string, base: values.base };
    // The same path as the entry's fast one (cliEntry.ts): streamed JSON, the store opened while git runs.
    return captureCommand(
      { repo: values.repo, target, maxFileBytes, json: values.json, storeDir: resolveStoreDir(storeArgs, process.env) },
      { stdout: process.stdout, stderr: (text) => process.stderr.write(text) },
    );
  }
  const store = await Store.open(resolveStoreDir(storeArgs, process.env));
  try {
    const forges = cliForges(process.env);
    const service = new ReviewService({ store, pullRequests: forges.pullRequests() });
    if (command === 'seat-server') {
      if (!values.base) throw new UsageError(`${command} needs --base REF`);
      if (!values.head && !values['working-tree']) throw new UsageError(`${command} needs --head REF or --working-tree`);
      const target: Target = values['working-tree'] ? { kind: 'working-tree', base: values.base } : { kind: 'branch', head: values.head as string, base: values.base };
      const result = await service.capture(values.repo, target, maxFileBytes === undefined ? undefined : { maxFileBytes });
      if (!result.ok) return refuse(result.error);
      // The store is not needed while serving; release it so the VS Code host can write.
      store.close();
      return await serveSeat(result.value.patchset, lens as Lens, values.author ?? 'seat');
    }

    let target: Target;
    if (values.pr !== undefined) {
      const resolved = await forges.resolve(values.repo, values.pr);
      if (!resolved.ok) return refuse(resolved.error);
      target = resolved.value;
    } else {
      const branches = await service.listBranches(values.repo);
      if (!branches.ok) return refuse(branches.error);
      const base = values.base ?? branches.value.defaultBase;
      if (!base) return refuse({ code: 'unknown-ref', message: 'no default base found (no origin/HEAD, main or master); pass --base REF' });
      if (values['working-tree']) {
        target = { kind: 'working-tree', base };
      } else {
        const head = values.head ?? branches.value.current;
        if (!head) return refuse({ code: 'detached-head', message: 'HEAD is detached; pass --head REF to say what to review' });
        target = { kind: 'branch', head, base };
      }
    }
    const opened = await service.openReview({ repo: values.repo, target, ...(maxFileBytes === undefined ? {} : { maxFileBytes }) });
    if (!opened.ok) return refuse(opened.error);
    const { snapshot, reattached, captured } = opened.value;
    if (values.json) {
      writeOut(JSON.stringify(opened.value, null, 2));
      return 0;
    }
    const lines = [
      `Session ${snapshot.session.id} (${reattached ? 'reattached' : 'new'}) · ${snapshot.session.repoRoot}`,
      snapshot.patchset ? formatPatchsetSummary(snapshot.patchset) : 'No patchset captured.',
      captured ? '' : '(this capture was already in the store; nothing new was written)',
    ];
    writeOut(lines.filter((l) => l.length > 0).join('\n'));
    if (!harnesses || !snapshot.patchset) return 0;
    const patchset = service.getPatchset(snapshot.patchset.id);
    if (!patchset.ok) return refuse(patchset.error);
    process.stdout.write('\n');
    const prTarget = snapshot.session.target.kind === 'pull-request' ? snapshot.session.target : null;
    const record = prTarget ? (snapshot.pullRequest ?? null) : null;
    // --since-last-review: the lenses read the delta since the reviewer's earlier review (host/rereview/).
    let lensPatchset = patchset.value;
    let rereview: RereviewPlan | null = null;
    if (values['since-last-review']) {
      const assigned = harnesses;
      const planned = await planRereview(
        {
          earlier: () => forges.earlierReview(snapshot.session),
          closureHarness: async () => ({ harness: assigned.flagged.compiler ?? assigned.design, hint: assigned.missingHint ?? null }),
          contextDir: join(snapshot.session.repoRoot, CONTEXT_ROOT, snapshot.session.id),
          log: (line) => process.stderr.write(`${line}\n`),
        },
        snapshot.session.repoRoot,
        patchset.value,
      );
      if (!planned.ok) return refuse(planned.error);
      rereview = planned.value;
      process.stderr.write(`${rereview.since.statement}\n${rereview.line}\n`);
      const carried = carryForwardOpenAsks(store, new AskLog(store), snapshot.session.id, rereview, new Date().toISOString());
      if (carried.length > 0) process.stderr.write(`Staged again (their items are still open): ${carried.join(', ')}\n`);
      fileDeltaPatchset(store, snapshot.session.id, rereview, patchset.value, new Date().toISOString());
      if (!rereview.since.lensPatchset) {
        // No commits since the earlier review: no lens has anything to read; the record says so.
        const prior = recordRereview(store, snapshot.session.id, currentGenerationId(store, snapshot.session.id), rereview, new Date().toISOString());
        if (jsonFile) {
          const report: ReviewReport = {
            ...(prTarget ? { target: reportTargetOf(prTarget, patchset.value) } : {}),
            patchset: patchset.value.id,
            generation: '',
            base: patchset.value.base,
            head: patchset.value.head,
            boards: [],
            spend: [],
            timings: [],
            delta: prior.delta,
            priorItems: prior.items,
          };
          writeFileSync(jsonFile, `${JSON.stringify(report, null, 2)}\n`);
        }
        return 0;
      }
      lensPatchset = rereview.since.lensPatchset;
    }
    try {
      const report = await runReview(
        {
          patchset: lensPatchset,
          sessionId: snapshot.session.id,
          workspace: snapshot.session.repoRoot,
          harnesses,
          jsonFile,
          htmlFile: values.html ?? null,
          store,
          ...(prTarget ? { reportTarget: reportTargetOf(prTarget, patchset.value) } : {}),
          ...(prTarget && record ? { pullRequest: pullRequestContext(record, prTarget.provider) } : {}),
          ...(rereview ? { rereview: { delta: rereview.since.delta, priorItems: priorReviewOf(rereview).items }, rereviewDelta: rereviewDeltaOf(rereview) } : {}),
        },
        reviewDeps(snapshot.session.repoRoot, { stdout: (text) => process.stdout.write(text), stderr: (text) => process.stderr.write(text) }),
      );
      if (rereview) recordRereview(store, snapshot.session.id, report.generation, rereview, new Date().toISOString());
    } catch (error) {
      if (error instanceof ReviewRefusal) return refuse({ code: 'invalid-request', message: error.message });
      throw error;
    }
    return 0;
  } finally {
    store.close();
  }
}

/** Exit code of a forge command's refusal: 3 (nothing was posted or staged). */
const FORGE_REFUSED = 3;

type ParsedValues = Record<string, string | boolean | undefined>;

/** `ask` and `post-review`: the request's review must exist here (`review --pr` made it). */
async function forgeCli(command: 'ask' | 'post-review', values: ParsedValues): Promise<number> {
  const str = (name: string) => (typeof values[name] === 'string' ? (values[name] as string) : undefined);
  const repo = str('repo');
  const pr = str('pr');
  if (!repo) throw new UsageError('--repo DIR is required');
  // ask: on a request's review (--pr) or on a branch's (--branch, with its --base), which rounds loop on.
  const branch = command === 'ask' ? str('branch') : undefined;
  if (!pr && !branch) throw new UsageError(command === 'ask' ? 'ask needs --pr N|URL or --branch B' : `${command} needs --pr N|URL`);
  if (pr && branch) throw new UsageError('ask takes --pr or --branch, not both');
  for (const flag of ['head', 'harness', 'html', 'base-url', 'model', 'lens', 'author', 'max-file-bytes', 'title', 'body', ...(branch ? [] : (['base', 'branch'] as const))] as const) {
    if (values[flag] !== undefined) throw new UsageError(`--${flag} is not an option of ${command}${branch ? ' --branch' : ''}`);
  }
  if (values['working-tree']) throw new UsageError(`--working-tree is not an option of ${command}`);
  const askFlags = ['intent', 'path', 'line', 'end-line', 'side', 'text'] as const;
  const postFlags = ['verdict', 'expect-composition'] as const;
  for (const flag of command === 'ask' ? postFlags : askFlags) if (values[flag] !== undefined) throw new UsageError(`--${flag} is not an option of ${command}`);
  if (command === 'ask' && values['dry-run']) throw new UsageError('--dry-run is not an option of ask');
  const json = values.json === true;
  const int = (name: string): number | undefined => {
    const raw = str(name);
    if (raw === undefined) return undefined;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${name} must be a positive integer`);
    return n;
  };
  let askInput: CliAskInput | null = null;
  if (command === 'ask') {
    const intent = str('intent');
    if (!intent || !['comment', 'request-change', 'question'].includes(intent)) throw new UsageError('ask needs --intent comment|request-change|question');
    const text = str('text');
    if (!text || text.trim() === '') throw new UsageError('ask needs --text T');
    const side = str('side');
    if (side !== undefined && side !== 'head' && side !== 'base') throw new UsageError('--side is head or base');
    const path = str('path');
    const line = int('line');
    const endLine = int('end-line');
    askInput = {
      intent: intent as AskIntent,
      text,
      ...(path !== undefined ? { path } : {}),
      ...(line !== undefined ? { line } : {}),
      ...(endLine !== undefined ? { endLine } : {}),
      ...(side ? { side: side as Side } : {}),
    };
  }
  const verdict = str('verdict');
  if (verdict !== undefined && !['approve', 'comment', 'request-changes'].includes(verdict)) throw new UsageError('--verdict is approve, comment or request-changes');

  const storeArgs = typeof values.store === 'string' ? ['--store', values.store] : [];
  const store = await Store.open(resolveStoreDir(storeArgs, process.env));
  try {
    const forges = cliForges(process.env);
    const service = new ReviewService({ store, pullRequests: forges.pullRequests() });
    const found = branch ? await branchSession(service, repo, branch, str('base')) : await pullRequestSession(service, forges, repo, pr as string);
    if (!found.ok) return refuseWith(found.error, FORGE_REFUSED);
    const { session } = found.value;
    const patchset = session.activePatchsetId ? store.getPatchset(session.activePatchsetId) : undefined;
    if (!patchset) return refuseWith({ code: 'invalid-request', message: 'the review has no capture' }, FORGE_REFUSED);
    const now = new Date().toISOString();
    if (command === 'ask') {
      const staged = cliAsk(store, session, patchset, askInput as CliAskInput, now);
      if (!staged.ok) return refuseWith(staged.error, FORGE_REFUSED);
      writeOut(json ? JSON.stringify(staged.value) : `staged ${staged.value.ask} on session ${staged.value.session}`);
      return 0;
    }
    const publisher = cliPublisher(store, service, forges);
    const expect = str('expect-composition');
    const result = await cliPostReview(
      store,
      publisher,
      session,
      { ...(verdict ? { verdict: verdict as VerdictFlag } : {}), dryRun: values['dry-run'] === true, ...(expect ? { expectComposition: expect } : {}) },
      now,
    );
    if (!result.ok) return refuseWith(result.error, FORGE_REFUSED);
    if (result.value.kind === 'dry-run') {
      const d = result.value.descriptor;
      writeOut(
        json
          ? JSON.stringify(d, null, 2)
          : `${d.event} · ${d.comments.length} comment${d.comments.length === 1 ? '' : 's'} · ${d.folded.length} folded into the body · composition ${d.compositionId}\n\n${d.body}`,
      );
      return 0;
    }
    const r = result.value.receipt;
    const out = { compositionId: r.compositionId, url: r.url, reviewId: r.reviewId, event: r.event, comments: r.comments, reused: r.reused };
    writeOut(json ? JSON.stringify(out, null, 2) : `${r.reused ? 'already posted' : 'posted'}: ${r.url} (${r.event}, ${r.comments} comment${r.comments === 1 ? '' : 's'})`);
    return 0;
  } finally {
    store.close();
  }
}

/**
 * `gates`: the request's merge gates and the local copy's freshness, read now (a read: exit 0
 * whatever they say). `merge`: merges the request pinned to --expect-head when every gate passes;
 * any refusal (a gate, a moved head, the forge's own) exits 3 with the reason and merges nothing.
 */
async function gatesCli(command: 'gates' | 'merge', values: ParsedValues, positionals: readonly string[]): Promise<number> {
  const str = (name: string) => (typeof values[name] === 'string' ? (values[name] as string) : undefined);
  const repo = str('repo');
  const pr = str('pr');
  if (!repo) throw new UsageError('--repo DIR is required');
  if (!pr) throw new UsageError(`${command} needs --pr N|URL`);
  if (positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}"`);
  // Every other flag given (a string, or a switch turned on) is refused.
  const allowed = new Set(['repo', 'pr', 'json', 'store', ...(command === 'merge' ? ['expect-head', 'method'] : [])]);
  for (const [flag, value] of Object.entries(values)) {
    if (allowed.has(flag) || value === undefined || value === false) continue;
    throw new UsageError(`--${flag} is not an option of ${command}`);
  }
  const json = values.json === true;
  const forges = cliForges(process.env);
  if (command === 'gates') {
    const read = await cliGates(forges, repo, pr);
    if (!read.ok) return refuseWith(read.error, FORGE_REFUSED);
    const { head, freshness, gates } = read.value;
    writeOut(json ? JSON.stringify({ head, freshness, gates }, null, 2) : gatesText(read.value));
    return 0;
  }
  const expectHead = str('expect-head');
  if (!expectHead || !/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(expectHead)) throw new UsageError('merge needs --expect-head SHA (the full head sha `rennet gates` printed)');
  const method = MergeMethod.safeParse(str('method') ?? 'merge');
  if (!method.success) throw new UsageError('--method is merge, squash or rebase');
  const merged = await cliMerge(forges, repo, pr, { expectHead, method: method.data });
  if (!merged.ok) return refuseWith(merged.error, FORGE_REFUSED);
  const m = merged.value;
  writeOut(json ? JSON.stringify(m, null, 2) : `merged ${m.provider === 'gitlab' ? '!' : '#'}${m.number} at ${m.head.slice(0, 7)} (${m.method})${m.sha ? `: ${m.sha}` : ''}`);
  return 0;
}

/** `open-pr`: push the branch and open (or reuse) its request; --dry-run shows exactly what would be submitted. */
async function openPrCli(values: ParsedValues): Promise<number> {
  const str = (name: string) => (typeof values[name] === 'string' ? (values[name] as string) : undefined);
  const repo = str('repo');
  if (!repo) throw new UsageError('--repo DIR is required');
  for (const flag of ['head', 'pr', 'html', 'lens', 'author', 'max-file-bytes', 'intent', 'path', 'line', 'end-line', 'side', 'text', 'verdict'] as const) {
    if (values[flag] !== undefined) throw new UsageError(`--${flag} is not an option of open-pr`);
  }
  if (values['working-tree']) throw new UsageError('--working-tree is not an option of open-pr');
  const json = values.json === true;
  // --harness: the Design lens's harness polishes the drafted title and description (checked before anything is read).
  let designHarness: Harness | null = null;
  if (values.harness !== undefined) {
    try {
      const harnessFlags = { baseUrl: str('base-url'), model: str('model') };
      const report = (lines: string[]) => process.stderr.write(`${lines.join('\n')}\n`);
      designHarness = (await loadHarnessAssignment(parseHarnessChoice(str('harness'), harnessFlags), harnessFlags, { report })).design;
    } catch (error) {
      if (error instanceof HarnessChoiceError) throw new UsageError(error.message);
      if (error instanceof HarnessLoadError) return refuseWith({ code: 'invalid-request', message: error.message }, FORGE_REFUSED);
      throw error;
    }
  } else if (values['base-url'] !== undefined || values.model !== undefined) {
    throw new UsageError('--base-url and --model go with --harness');
  }
  const storeArgs = typeof values.store === 'string' ? ['--store', values.store] : [];
  const store = await Store.open(resolveStoreDir(storeArgs, process.env));
  try {
    const forges = cliForges(process.env);
    const access = forges.access();
    if (!access.ok) return refuseWith(access.error, FORGE_REFUSED);
    const service = new ReviewService({ store });
    const handle = await openRepo(repo);
    if (!handle.ok) return refuseWith(handle.error, FORGE_REFUSED);
    const root = handle.value.root;
    const input = branchOpenPrInput(
      { store, findSession: (r, t) => service.findSession(r, t) },
      root,
      { repoDir: repo, branch: str('branch'), base: str('base'), title: str('title'), body: str('body') },
      values.harness !== undefined ? { harness: async () => ({ harness: designHarness, hint: designHarness ? null : 'the harness drafts no Design board' }) } : null,
    );
    if (values['dry-run']) {
      const preview = await previewPullRequest(input, access.value);
      if (!preview.ok) return refuseWith(preview.error, FORGE_REFUSED);
      const p = preview.value;
      writeOut(
        json
          ? JSON.stringify(p, null, 2)
          : `${p.existing ? `reuses ${p.existing.url}` : 'opens a new request'} · ${p.branch} → ${p.base} on ${p.destination.owner}/${p.destination.repo} (${p.destination.host}, remote ${p.destination.remote}) · composition ${p.compositionId}\n\n${p.title}\n\n${p.body}`,
      );
      return 0;
    }
    const expect = str('expect-composition');
    const opened = await openPullRequest({ ...input, ...(expect ? { expectComposition: expect } : {}) }, access.value);
    if (!opened.ok) return refuseWith(opened.error, FORGE_REFUSED);
    const o = opened.value;
    writeOut(json ? JSON.stringify(o, null, 2) : `${o.reused ? 'reused' : 'opened'} ${o.url}`);
    return 0;
  } finally {
    store.close();
  }
}

/** Serves one seat until stdin closes (or SIGTERM/SIGINT), then prints the board. */
async function serveSeat(patchset: Patchset, lens: Lens, author: string): Promise<number> {
  const context = { author, citations: buildCitationIndex(patchset) };
  const seat = new BoardSeat({ state: openDraftingBoard(lens, patchset, context), context });
  const server = await startSeatServer({ seat });
  // Listen for the end before announcing the server, so a stop right after the line is not lost.
  const stopped = new Promise<void>((resolve) => {
    const done = () => resolve();
    process.stdin.once('end', done).once('close', done).once('error', done);
    process.once('SIGTERM', done).once('SIGINT', done);
    process.stdin.resume();
  });
  writeOut(JSON.stringify({ url: server.url, headers: server.headers }));
  await stopped;
  await server.close();
  process.stdin.destroy();
  writeOut(JSON.stringify(seat.snapshot()));
  return 0;
}

function toolsText(lens: Lens): string {
  return buildBoardTools(lens)
    .map((tool) => {
      const properties = (tool.inputSchema.properties ?? {}) as Record<string, { type?: unknown; enum?: unknown[]; items?: { type?: unknown } }>;
      const required = new Set(tool.inputSchema.required ?? []);
      const fields = Object.entries(properties).map(([name, p]) => {
        const type = Array.isArray(p.enum) ? p.enum.join('|') : p.type === 'array' ? `${String(p.items?.type ?? 'any')}[]` : String(p.type ?? 'any');
        return `${name}${required.has(name) ? '' : '?'}: ${type}`;
      });
      return `${tool.name}(${fields.join(', ')})\n    ${tool.description}`;
    })
    .join('\n');
}

function writeOut(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

function refuse(error: RennetError): number {
  return refuseWith(error, 1);
}

function refuseWith(error: RennetError, code: number): number {
  process.stderr.write(`rennet: ${error.message}\n`);
  return code;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof EvalUsageError) {
      process.stderr.write(`rennet: ${error.message}\n\n${EVAL_USAGE}`);
      process.exitCode = 2;
      return;
    }
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`rennet: ${(error as Error).message}\n\n${USAGE}`);
      process.exitCode = 2;
      return;
    }
    process.stderr.write(`rennet: ${(error as Error).stack ?? String(error)}\n`);
    process.exitCode = 1;
  },
);

/**
 * `round`: dispatches the branch review's staged coding asks as one round and waits for it to end
 * (--json FILE: the round as JSON). `rounds`: the review's rounds ledger. A dispatch the loop
 * refuses (nothing staged, only questions, submodules, a round running) exits 3 and changes nothing;
 * a round that ran and failed or was cancelled exits 1, having said at which phase and why.
 */
async function roundsCli(command: 'round' | 'rounds' | 'land' | 'archive', values: ParsedValues, jsonFile: string | null): Promise<number> {
  const str = (name: string) => (typeof values[name] === 'string' ? (values[name] as string) : undefined);
  const repo = str('repo');
  if (!repo) throw new UsageError('--repo DIR is required');
  for (const flag of ['head', 'html', 'lens', 'author', 'max-file-bytes', 'intent', 'path', 'line', 'end-line', 'side', 'text', 'verdict', 'title', 'body', 'expect-composition'] as const) {
    if (values[flag] !== undefined) throw new UsageError(`--${flag} is not an option of ${command}`);
  }
  if (values['working-tree'] || values['dry-run']) throw new UsageError(`--working-tree and --dry-run are not options of ${command}`);
  // --pr: one's own request's review (made by review --pr), which loops on the request's head branch.
  const pr = str('pr');
  if (pr !== undefined && (values.branch !== undefined || values.base !== undefined))
    throw new UsageError('--pr names the request; its head branch and base come from the forge (no --branch or --base)');
  const workerFlag = str('worker');
  if (command === 'round' && !workerFlag && !values.retry) throw new UsageError('round needs --worker claude-code|codex|scripted:FILE (a --retry runs no worker)');
  if (command !== 'round' && (workerFlag !== undefined || values.harness !== undefined || values.retry || values.workspace !== undefined))
    throw new UsageError('--worker, --harness, --retry and --workspace are options of round');
  if (command !== 'round' && jsonFile !== null) throw new UsageError(`--json takes no FILE on ${command} (it prints to stdout)`);
  const workspaceMode = RoundsWorkspaceMode.safeParse(str('workspace') ?? ROUNDS_WORKSPACE_DEFAULT);
  if (!workspaceMode.success) throw new UsageError(`--workspace is share or own, not "${str('workspace')}"`);
  let harnesses: HarnessAssignment | null = null;
  if (command === 'round') {
    try {
      const harnessFlags = { baseUrl: str('base-url'), model: str('model') };
      const report = (lines: string[]) => process.stderr.write(`${lines.join('\n')}\n`);
      harnesses = await loadHarnessAssignment(parseHarnessChoice(str('harness'), harnessFlags), harnessFlags, { report });
      if (jsonFile !== null) checkOutputPath(jsonFile, '--json');
    } catch (error) {
      if (error instanceof HarnessChoiceError) throw new UsageError(error.message);
      if (error instanceof HarnessLoadError || error instanceof ReviewRefusal) return refuseWith({ code: 'invalid-request', message: (error as Error).message }, FORGE_REFUSED);
      throw error;
    }
  }
  const storeArgs = typeof values.store === 'string' ? ['--store', values.store] : [];
  const store = await Store.open(resolveStoreDir(storeArgs, process.env));
  try {
    const service = new ReviewService({ store });
    const handle = await openRepo(repo);
    if (!handle.ok) return refuseWith(handle.error, FORGE_REFUSED);
    let found: Result<{ session: Session }>;
    if (pr !== undefined) {
      found = await pullRequestSession(service, cliForges(process.env), repo, pr);
    } else {
      const branch = str('branch') ?? (await currentBranch(handle.value));
      if (!branch) return refuseWith({ code: 'detached-head', message: 'HEAD is detached: name the branch with --branch' }, FORGE_REFUSED);
      found = await branchSession(service, repo, branch, str('base'));
    }
    if (!found.ok) return refuseWith(found.error, FORGE_REFUSED);
    const { session } = found.value;
    if (command === 'rounds') {
      const rows = ledgerRows(foldRounds(session.id, store.readEvents(session.id)).trails);
      const landing = await landingFor(store, session);
      if (!landing.ok) return refuseWith(landing.error, FORGE_REFUSED);
      const line = landing.value.line;
      writeOut(
        values.json === true
          ? JSON.stringify({ session: session.id, rounds: rows.map(roundJson), landing: line }, null, 2)
          : [
              rows.length === 0
                ? 'No rounds yet.'
                : rows
                    .map(
                      (r) =>
                        `round ${r.ordinal}: ${r.state}${r.failure ? ` at ${r.failure.phase}` : ''} · ${r.asks.length} asks · ${r.worker.kind}${r.range ? ` · ${r.range.from.slice(0, 7)}..${r.range.to.slice(0, 7)}` : ''}`,
                    )
                    .join('\n'),
              ...(line ? [line] : []),
            ].join('\n'),
      );
      return 0;
    }
    if (command === 'land') {
      const landed = await landWorkBranch(store, session);
      if (!landed.ok) return refuseWith(landed.error, FORGE_REFUSED);
      writeOut(values.json === true ? JSON.stringify(landed.value, null, 2) : landed.value.message);
      return 0;
    }
    if (command === 'archive') {
      const archived = await archiveSession(store, session, { now: () => new Date().toISOString(), snapshots: { dataDir: store.dir, patchsetIds: sessionPatchsetIds(store, session.id) } });
      if (!archived.ok) return refuseWith(archived.error, FORGE_REFUSED);
      writeOut(values.json === true ? JSON.stringify(archived.value, null, 2) : archived.value.message);
      return 0;
    }
    const worker = workerFlag ? await workerFromFlag(workerFlag) : null;
    if (worker && !worker.ok) return refuseWith(worker.error, FORGE_REFUSED);
    const stderr = (t: string) => process.stderr.write(t);
    const runner = cliRoundRunner(store, stderr, workspaceMode.data);
    // A round a stopped process left running is settled first (failed, retryable; a worker without a receipt recorded lost).
    runner.settleInterrupted([session.id]);
    const context = cliRoundContext(store, harnesses as HarnessAssignment, stderr, worker?.value);
    // --retry: the review's last round, failed, resumes from its last receipt (its worker never runs twice).
    const last = runner.rounds(session.id).at(-1);
    if (values.retry && !last) return refuseWith({ code: 'invalid-request', message: 'this review has no round to retry' }, FORGE_REFUSED);
    if (!values.retry && !worker) throw new UsageError('round needs --worker');
    const dispatched =
      values.retry && last ? await runner.retry(session.id, last.id, context) : await runner.dispatch(session.id, { ...context, worker: (worker as Extract<typeof worker, { ok: true }>).value });
    if (!dispatched.ok) return refuseWith(dispatched.error, FORGE_REFUSED);
    process.stderr.write(
      `Round ${dispatched.value.round.ordinal} ${values.retry ? 'resumed' : 'dispatched'}: ${dispatched.value.round.asks.length} ask${dispatched.value.round.asks.length === 1 ? '' : 's'} to ${dispatched.value.round.worker.kind} in ${dispatched.value.round.workspace.root}\n`,
    );
    const round = await dispatched.value.done;
    const out = roundJson(round);
    if (jsonFile !== null) writeFileSync(jsonFile, `${JSON.stringify(out, null, 2)}\n`);
    writeOut(
      values.json === true
        ? JSON.stringify(out, null, 2)
        : `round ${round.ordinal}: ${round.state}${round.failure ? ` at ${round.failure.phase}: ${round.failure.message}` : ''}${round.report ? ` · ${round.report.counts.addressed} addressed, ${round.report.counts.partial} partial, ${round.report.counts.untouched} untouched` : ''}`,
    );
    return round.state === 'returned' || round.state === 'unchanged' ? 0 : 1;
  } finally {
    store.close();
  }
}

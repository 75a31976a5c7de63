import { LENS_TITLES } from '../../protocol/board';
import { PROMPT_FILES } from '../../prompts/generated';
import { PARTIAL_FILES, SEAT_PROMPTS, documentPromptEntry, seatPromptEntry, type DocumentPromptEntry, type PromptSeatRole, type SeatPromptEntry } from '../../prompts/manifest';
import { checkRepoRelativePath } from '../capture/paths';
import type { PromptReader, SeatPromptContext, SeatRole, SeatSpec } from './ports';

/**
 * The PromptReader over prompts/: a seat's first turn is a short fixed header naming the context
 * directory, the seat's prompt file, then its partials in manifest order. Nothing derived from the
 * change is interpolated — the only variable is the context directory's repo-relative path — so
 * two changes reviewed in the same context directory get byte-identical prompts. A follow-up turn
 * is a fixed frame around the last finish verdict and nothing else.
 */

// The manifest's role names are the ports' role names (checked both ways at compile time).
const roleNamesAgree: [PromptSeatRole] extends [SeatRole] ? ([SeatRole] extends [PromptSeatRole] ? true : never) : never = true;
void roleNamesAgree;

/** A follow-up carries at most this many bytes of the verdict (finish results are capped far below it). */
export const FOLLOW_UP_VERDICT_MAX_BYTES = 8 * 1024;

const ROLE_LABELS: Record<SeatRole, string> = {
  drafter: 'writer',
  reviewer: 'review',
  compiler: 'compiler',
};

export function createPromptReader(): PromptReader {
  return {
    seatPrompt(seat, context) {
      return assembleSeatPrompt(entryFor(seat), context);
    },
    followUpPrompt(seat, lastVerdict) {
      entryFor(seat);
      return followUp(seat.role, lastVerdict);
    },
  };
}

/** The manifest entry of a seat, or a thrown error naming the seat: a seat without a prompt is a host defect. */
export function entryFor(seat: SeatSpec): SeatPromptEntry {
  const entry = seatPromptEntry(seat.lens, seat.role);
  if (!entry) {
    const known = SEAT_PROMPTS.map((e) => `${e.lens}:${e.role}`).join(', ');
    throw new Error(`no prompt for seat ${seat.seatId} (${seat.lens}:${seat.role}); prompts exist for ${known}`);
  }
  return entry;
}

/**
 * A seat's first-turn prompt, exactly as createPromptReader().seatPrompt builds it. Nothing in it
 * depends on the session (the seat reads its context files by name with read_context), so one
 * seat's prompt is byte-identical across reviews and a provider's prompt cache serves it whole.
 * `context` is still validated: a context directory that is not repo-relative is refused.
 */
export function assembleSeatPrompt(entry: SeatPromptEntry, context: SeatPromptContext): string {
  contextDirOf(context);
  const header = [
    `# Rennet: ${LENS_TITLES[entry.lens]} (${ROLE_LABELS[entry.role]})`,
    '',
    "This review's context folder is read by name with `read_context`, `README.md` first: it states the reviewed range and what every other file there holds. " +
      'A file named below without a folder, such as `pr.md`, is one of them; some are present only for some changes, and the README lists the ones that are.',
  ].join('\n');
  return joinParts([header, PROMPT_FILES[entry.file], ...entry.partials.map((p) => PROMPT_FILES[PARTIAL_FILES[p]])]);
}

/**
 * The landed-round classifier's prompt: a fixed header, then round-report.md and its partials.
 * Nothing in it depends on the session — read_evidence serves evidence.json and read_context the
 * context folder by name — so it is byte-identical across rounds and sessions. `context` is still
 * validated, as a seat prompt's is.
 */
export function roundReportPrompt(context: SeatPromptContext): string {
  contextDirOf(context);
  const entry = documentPromptEntry('round-report');
  return joinParts(['# Rennet: round report', ...documentParts(entry)]);
}

/**
 * The re-review's closure seat: a fixed header, then prior-closure.md. Nothing in it depends on the
 * pull request — read_prior_items serves the items and the fix delta's units — so it is
 * byte-identical across re-reviews.
 */
export function priorClosurePrompt(): string {
  return joinParts(['# Rennet: prior items', ...documentParts(documentPromptEntry('prior-closure'))]);
}

/**
 * `rennet eval score --judge`: a fixed header, then eval-judge.md. The finding and the change reach
 * the judge through its tools (read_finding, the read tools), so the prompt is the same for every case.
 */
export function evalJudgePrompt(): string {
  return joinParts(['# Rennet: eval judge', ...documentParts(documentPromptEntry('eval-judge'))]);
}

/** The coding worker's prompt: a header naming the work order, then round-worker.md. Nothing of the asks is in it. */
export function roundWorkerPrompt(context: SeatPromptContext): string {
  const dir = contextDirOf(context);
  const entry = documentPromptEntry('round-worker');
  const header = ['# Rennet: round worker', '', `Your work order is \`${dir}/work-order.md\`.`].join('\n');
  return joinParts([header, ...documentParts(entry)]);
}

/**
 * The reviewer-voice rules as a document (no header): the job that writes the reviewer's
 * first-person text gets them as a file in the context directory and reads them there.
 */
export function reviewerVoiceText(): string {
  return joinParts(documentParts(documentPromptEntry('reviewer-voice')));
}

export function promptBytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

function documentParts(entry: DocumentPromptEntry): string[] {
  return [PROMPT_FILES[entry.file], ...entry.partials.map((p) => PROMPT_FILES[PARTIAL_FILES[p]])];
}

function followUp(role: SeatRole, lastVerdict: string | null): string {
  if (role === 'reviewer') {
    if (lastVerdict === null) {
      return paragraphs(
        'Your previous turn ended before you handed in your findings: `submit_findings` was never called.',
        'Continue the review where you stopped, then hand in the findings document with `submit_findings`.',
      );
    }
    return frame('Your previous turn ended before your findings were accepted. The last answer `submit_findings` gave:', lastVerdict, 'Fix what it names, then call `submit_findings` again.');
  }
  if (lastVerdict === null) {
    return paragraphs(
      'Your previous turn ended before the document settled, and `finish` was never called.',
      'Continue writing where you stopped, then call `finish`, answer each pointer it returns with further calls, and call `finish` again until it settles.',
    );
  }
  return frame(
    'Your previous turn ended before the document settled. The last answer `finish` gave:',
    lastVerdict,
    'Answer each pointer with further calls, then call `finish` again until it settles.',
  );
}

function frame(before: string, verdict: string, after: string): string {
  return paragraphs(before, boundVerdict(verdict), after);
}

function paragraphs(...parts: string[]): string {
  return `${parts.join('\n\n')}\n`;
}

function boundVerdict(verdict: string): string {
  const trimmed = verdict.replace(/\s+$/, '');
  const bytes = Buffer.from(trimmed, 'utf8');
  if (bytes.length <= FOLLOW_UP_VERDICT_MAX_BYTES) return trimmed;
  // Cut on a character boundary: drop a partial UTF-8 sequence at the end.
  let end = FOLLOW_UP_VERDICT_MAX_BYTES;
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return `${bytes.subarray(0, end).toString('utf8')}\n…[verdict truncated: ${bytes.length} bytes in all]`;
}

function contextDirOf(context: SeatPromptContext): string {
  const dir = context.contextDir.replace(/\/+$/, '');
  const checked = checkRepoRelativePath(dir);
  if (!checked.ok) throw new Error(`context directory: ${checked.error.message}`);
  return dir;
}

function joinParts(parts: readonly string[]): string {
  return `${parts.map((part) => part.replace(/\s+$/, '')).join('\n\n')}\n`;
}

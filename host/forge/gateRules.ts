import type { Gate, GateState } from '../../protocol/gates';

/**
 * PURE. How the forges' answers become merge gates (protocol/gates.ts), shared by github.ts and
 * gitlab.ts: a check run, a commit status, a pipeline job or a pipeline by its own name; draft;
 * review-at-head. Every state a rule does not know is pending, never a pass. Forge text (names,
 * titles, descriptions) is carried as data.
 */

export const sha7 = (sha: string): string => sha.slice(0, 7);

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** GitHub check run: queued/in progress → pending; success, neutral, skipped → pass; any other conclusion → fail. */
export function checkRunGate(run: { name: string; status: string; conclusion: string | null; output?: { title?: string | null } | null }): Gate {
  const title = run.output?.title ? `: ${run.output.title}` : '';
  if (run.status !== 'completed') return { name: run.name, kind: 'check', state: 'pending', detail: `${run.status.replace(/_/g, ' ')}${title}` };
  const conclusion = run.conclusion ?? 'unknown';
  const state: GateState = ['success', 'neutral', 'skipped'].includes(conclusion) ? 'pass' : 'fail';
  return { name: run.name, kind: 'check', state, detail: `${conclusion.replace(/_/g, ' ')}${title}` };
}

/** GitHub commit status: success → pass; pending → pending; error, failure (or anything else) → fail. */
export function statusGate(st: { context: string; state: string; description?: string | null }): Gate {
  const state: GateState = st.state === 'success' ? 'pass' : st.state === 'pending' ? 'pending' : 'fail';
  return { name: st.context, kind: 'status', state, detail: `${st.state}${st.description ? `: ${st.description}` : ''}` };
}

const JOB_WAITING = new Set(['created', 'pending', 'running', 'preparing', 'waiting_for_resource', 'scheduled']);

/**
 * GitLab job: success, skipped → pass; failed or canceled → fail unless it is allowed to fail;
 * manual → pending (it waits to be run) unless it is allowed to fail; running and waiting → pending.
 */
export function jobGate(job: { name: string; stage?: string | null; status: string; allow_failure?: boolean }): Gate {
  const stage = job.stage ? ` (${job.stage})` : '';
  const allowed = job.allow_failure === true;
  const base = { name: job.name, kind: 'job' as const };
  if (job.status === 'success') return { ...base, state: 'pass', detail: `success${stage}` };
  if (job.status === 'skipped') return { ...base, state: 'pass', detail: `skipped${stage}` };
  if (job.status === 'failed' || job.status === 'canceled') return { ...base, state: allowed ? 'pass' : 'fail', detail: `${job.status}${allowed ? ', allowed to fail' : ''}${stage}` };
  if (job.status === 'manual') return { ...base, state: allowed ? 'pass' : 'pending', detail: `manual: waits to be run${allowed ? ' (optional)' : ''}${stage}` };
  if (JOB_WAITING.has(job.status)) return { ...base, state: 'pending', detail: `${job.status.replace(/_/g, ' ')}${stage}` };
  return { ...base, state: 'pending', detail: `${job.status}${stage}` };
}

/** GitLab pipeline: success → pass; failed, canceled → fail; skipped → pass; anything else (running, manual, …) → pending. */
export function pipelineGate(p: { id: number; status: string; sha: string }, head: string): Gate {
  const name = 'pipeline';
  if (p.sha !== head) return { name, kind: 'pipeline', state: 'pending', detail: `no pipeline has run on the head ${sha7(head)} yet (the newest ran on ${sha7(p.sha)})` };
  const detail = `#${p.id} ${p.status.replace(/_/g, ' ')}`;
  if (p.status === 'success' || p.status === 'skipped') return { name, kind: 'pipeline', state: 'pass', detail };
  if (p.status === 'failed' || p.status === 'canceled') return { name, kind: 'pipeline', state: 'fail', detail };
  return { name, kind: 'pipeline', state: 'pending', detail };
}

export function draftGate(draft: boolean): Gate {
  return draft ? { name: 'draft', kind: 'draft', state: 'fail', detail: 'a draft: mark it ready for review first' } : { name: 'draft', kind: 'draft', state: 'pass', detail: 'ready for review' };
}

export function behindGate(baseRef: string, behind: number | null, moved: boolean): Gate {
  if (!moved) return { name: 'behind-base', kind: 'behind-base', state: 'pass', detail: `contains the tip of ${baseRef}` };
  const count = behind === null ? '' : `${plural(behind, 'commit')} `;
  return { name: 'behind-base', kind: 'behind-base', state: 'fail', detail: `${count}behind ${baseRef}: merge or rebase ${baseRef} into it and push` };
}

/** One reviewer's standing approval: who, and the commit it was given on (null when the forge does not say). */
export interface Approval {
  login: string;
  commit: string | null;
}

/**
 * review-at-head: at least one approval, not by the author, given on the head itself. An approval
 * of an earlier commit does not count (it reviewed other code), and is named.
 */
export function reviewAtHeadGate(head: string, author: string, approvals: readonly Approval[]): Gate {
  const others = approvals.filter((a) => a.login.toLowerCase() !== author.toLowerCase());
  const atHead = others.filter((a) => a.commit === head);
  const name = 'review-at-head';
  if (atHead.length > 0) return { name, kind: 'review-at-head', state: 'pass', detail: `approved at the head ${sha7(head)} by ${atHead.map((a) => a.login).join(', ')}` };
  const older = others.filter((a) => a.commit !== head);
  if (older.length === 0) return { name, kind: 'review-at-head', state: 'fail', detail: `no approval of the head ${sha7(head)}` };
  const words = older.map((a) => `${a.login} approved ${a.commit === null ? 'an earlier commit' : sha7(a.commit)}`).join('; ');
  return { name, kind: 'review-at-head', state: 'fail', detail: `${words} — not the head ${sha7(head)}; an approval of an earlier commit does not count` };
}

/** required-reviews from a count: `have` approvals of `need`, none outstanding against it. */
export function requiredReviewsGate(need: number, have: number, changesRequestedBy: readonly string[], waitingOn: readonly string[], source: string): Gate {
  const name = 'required-reviews';
  const waiting = waitingOn.length > 0 ? `; awaiting ${waitingOn.join(', ')}` : '';
  if (changesRequestedBy.length > 0) return { name, kind: 'required-reviews', state: 'fail', detail: `changes requested by ${changesRequestedBy.join(', ')}${waiting}` };
  if (need === 0) return { name, kind: 'required-reviews', state: 'pass', detail: `no approval required by ${source}${waiting}` };
  const state: GateState = have >= need ? 'pass' : 'fail';
  return { name, kind: 'required-reviews', state, detail: `${have} of ${plural(need, 'required approval')} (${source})${waiting}` };
}

import { gitlabFile, gitlabLine, gitlabLineCode, gitlabPaths, type DiffFile, type DiffLine, type PullDiff } from './diff';
import { intOf, reply, type Params, type Reply } from './http';

/**
 * GitLab's diff-note positions (`position[...]` of discussions and draft notes), checked as GitLab
 * checks them: the shas must be the merge request's current `diff_refs` (deliberately stricter
 * than GitLab, which also accepts an earlier version's), the paths must name a file of the diff,
 * and the (old_line, new_line) pair must name one of its lines — an added line by `new_line`
 * only, a deleted line by `old_line` only, a context line by both. A `line_range`'s start and end
 * line codes must be codes of lines of that file (`<sha1(new_path)>_<old>_<new>`), the end the
 * position's own line, the start at or before it.
 */

export interface LineRangeEnd {
  line_code: string;
  type: 'new' | 'old' | null;
  old_line: number | null;
  new_line: number | null;
}

export interface GitlabPosition {
  base_sha: string;
  start_sha: string;
  head_sha: string;
  old_path: string;
  new_path: string;
  position_type: 'text' | 'file';
  old_line: number | null;
  new_line: number | null;
  line_range: { start: LineRangeEnd; end: LineRangeEnd } | null;
}

export interface DiffRefs {
  base_sha: string;
  start_sha: string;
  head_sha: string;
}

export const LINE_CODE_ERROR = `400 Bad request - Note {:line_code=>["can't be blank", "must be a valid line code"]}`;

export type PositionCheck = { ok: true; position: GitlabPosition; lineCode: string | null } | { ok: false; reply: Reply };

const bad = (message: string): PositionCheck => ({ ok: false, reply: reply(400, { message }) });
const missing = (error: string): PositionCheck => ({ ok: false, reply: reply(400, { error }) });

function isObject(v: unknown): v is Params {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function optInt(v: unknown): number | null | 'invalid' {
  if (v === undefined || v === null || v === '') return null;
  const n = intOf(v);
  return n === null ? 'invalid' : n;
}

/** Checks a `position` parameter against the merge request's current diff. */
export function checkPosition(raw: unknown, refs: DiffRefs, diff: PullDiff): PositionCheck {
  if (!isObject(raw)) return missing('position is invalid');
  const absent = (['base_sha', 'start_sha', 'head_sha', 'position_type'] as const).filter((k) => typeof raw[k] !== 'string' || raw[k] === '');
  if (absent.length > 0) return missing(absent.map((k) => `position[${k}] is missing`).join(', '));
  const type = raw['position_type'] as string;
  if (!['text', 'image', 'file'].includes(type)) return missing('position[position_type] does not have a valid value');
  const oldLine = optInt(raw['old_line']);
  const newLine = optInt(raw['new_line']);
  if (oldLine === 'invalid') return missing('position[old_line] is invalid');
  if (newLine === 'invalid') return missing('position[new_line] is invalid');
  const oldPath = typeof raw['old_path'] === 'string' && raw['old_path'] !== '' ? raw['old_path'] : null;
  const newPath = typeof raw['new_path'] === 'string' && raw['new_path'] !== '' ? raw['new_path'] : null;
  // Stale or foreign diff refs: GitLab finds no diff file, so no line code.
  if (raw['base_sha'] !== refs.base_sha || raw['start_sha'] !== refs.start_sha || raw['head_sha'] !== refs.head_sha) return bad(LINE_CODE_ERROR);
  if (type === 'image') return bad(LINE_CODE_ERROR);
  const file = gitlabFile(diff, oldPath, newPath);
  if (file === undefined) return bad(type === 'file' ? '400 Bad request - Note {:position=>["is invalid"]}' : LINE_CODE_ERROR);
  const paths = gitlabPaths(file);
  const base = { base_sha: refs.base_sha, start_sha: refs.start_sha, head_sha: refs.head_sha, old_path: paths.oldPath, new_path: paths.newPath };
  if (type === 'file') return { ok: true, position: { ...base, position_type: 'file', old_line: null, new_line: null, line_range: null }, lineCode: null };
  if (oldLine === null && newLine === null) return bad(LINE_CODE_ERROR);
  const line = gitlabLine(file, oldLine, newLine);
  if (line === undefined) return bad(LINE_CODE_ERROR);
  let lineRange: GitlabPosition['line_range'] = null;
  if (raw['line_range'] !== undefined && raw['line_range'] !== null && raw['line_range'] !== '') {
    const r = checkLineRange(raw['line_range'], file, line);
    if (typeof r === 'string') return bad(`400 Bad request - Note {:line_range=>[${JSON.stringify(r)}]}`);
    lineRange = r;
  }
  return { ok: true, position: { ...base, position_type: 'text', old_line: oldLine, new_line: newLine, line_range: lineRange }, lineCode: gitlabLineCode(file, line) };
}

function checkLineRange(raw: unknown, file: DiffFile, end: DiffLine): GitlabPosition['line_range'] | string {
  if (!isObject(raw) || !isObject(raw['start']) || !isObject(raw['end'])) return 'must have a start and an end';
  const parse = (o: Params, which: string): { line: DiffLine; value: LineRangeEnd } | string => {
    const code = o['line_code'];
    if (typeof code !== 'string' || code === '') return `${which} line_code can't be blank`;
    const line = file.lines.find((l) => gitlabLineCode(file, l) === code);
    if (line === undefined) return `${which} line_code must be a valid line code`;
    const t = o['type'];
    if (t !== undefined && t !== null && t !== '' && t !== 'new' && t !== 'old') return `${which} type is invalid`;
    if ((line.kind === 'add' && t === 'old') || (line.kind === 'del' && t === 'new')) return `${which} type does not match its line`;
    const ol = optInt(o['old_line']);
    const nl = optInt(o['new_line']);
    if (ol === 'invalid' || nl === 'invalid' || (ol !== null && ol !== line.oldLine) || (nl !== null && nl !== line.newLine)) return `${which} lines do not match its line_code`;
    return { line, value: { line_code: code, type: t === 'new' || t === 'old' ? t : null, old_line: line.oldLine, new_line: line.newLine } };
  };
  const s = parse(raw['start'], 'start');
  if (typeof s === 'string') return s;
  const e = parse(raw['end'], 'end');
  if (typeof e === 'string') return e;
  if (e.line !== end) return 'end must be the line of the position';
  if (s.line.position > e.line.position) return 'start must not follow end';
  return { start: s.value, end: e.value };
}

import { crc32Hex } from './crc32';

/**
 * The journal file format. Pure functions over bytes; no I/O.
 *
 *   rennet-journal v1 gen=<16 hex> base=<seq>\n            one header line, written atomically
 *   <byteLength> <crc32 hex>\n<json>\n                        one frame per record, appended
 *
 * `gen` changes on every compaction (it is how other processes notice the file was replaced);
 * `base` is the seq the snapshot covered when this journal was started, so the first record is
 * base+1 and records are contiguous. A record is one transaction: `{"seq":n,"ops":[[sql,[params]],…]}`.
 */

export const JOURNAL_FORMAT = 1;
const HEADER_PREFIX = 'rennet-journal ';
/** Longest frame header: 10 digits, space, 8 hex. */
const MAX_FRAME_HEADER = 19;
const NL = 0x0a;

export type SqlParam = string | number | null;
export interface JournalOp {
  sql: string;
  params: SqlParam[];
}
export interface JournalRecord {
  seq: number;
  ops: JournalOp[];
}

export interface JournalHeader {
  format: number;
  gen: string;
  base: number;
  /** Bytes the header line takes; the first record starts here. */
  length: number;
}

export function encodeHeader(gen: string, base: number): Buffer {
  return Buffer.from(`${HEADER_PREFIX}v${JOURNAL_FORMAT} gen=${gen} base=${base}\n`, 'utf8');
}

/** Parses the header at the start of `buf`; a string is the reason it is not a usable header. */
export function parseHeader(buf: Uint8Array): JournalHeader | string {
  const nl = indexOfByte(buf, NL, 0, Math.min(buf.length, 128));
  const text = Buffer.from(buf.subarray(0, nl === -1 ? Math.min(buf.length, 128) : nl)).toString('utf8');
  if (!text.startsWith(HEADER_PREFIX)) return 'not a Rennet journal (bad header)';
  const m = /^rennet-journal v(\d+) gen=([0-9a-f]{1,64}) base=(\d{1,15})$/.exec(text);
  const version = /^rennet-journal v(\d+)/.exec(text);
  if (version && Number(version[1]) > JOURNAL_FORMAT) {
    return `journal format v${version[1]} is newer than this Rennet understands (v${JOURNAL_FORMAT}); update Rennet`;
  }
  if (nl === -1 || !m) return 'journal header is damaged';
  return { format: Number(m[1]), gen: m[2] as string, base: Number(m[3]), length: nl + 1 };
}

export function encodeRecord(record: JournalRecord): Buffer {
  const json = Buffer.from(JSON.stringify({ seq: record.seq, ops: record.ops.map((op) => [op.sql, op.params]) }), 'utf8');
  const head = Buffer.from(`${json.length} ${crc32Hex(json)}\n`, 'ascii');
  const out = Buffer.allocUnsafe(head.length + json.length + 1);
  head.copy(out, 0);
  json.copy(out, head.length);
  out[out.length - 1] = NL;
  return out;
}

export type FrameResult = { kind: 'ok'; record: JournalRecord; end: number } | { kind: 'incomplete' } | { kind: 'bad'; reason: string };

/** Tries to read one frame starting at `pos` of `buf`. `end` is the index just past it. */
export function readFrame(buf: Uint8Array, pos: number): FrameResult {
  const nl = indexOfByte(buf, NL, pos, Math.min(buf.length, pos + MAX_FRAME_HEADER + 1));
  if (nl === -1) {
    return buf.length - pos <= MAX_FRAME_HEADER ? { kind: 'incomplete' } : { kind: 'bad', reason: 'no frame header' };
  }
  const head = Buffer.from(buf.subarray(pos, nl)).toString('latin1');
  const m = /^(\d{1,10}) ([0-9a-f]{8})$/.exec(head);
  if (!m) return { kind: 'bad', reason: 'malformed frame header' };
  const length = Number(m[1]);
  const bodyStart = nl + 1;
  const bodyEnd = bodyStart + length;
  if (bodyEnd + 1 > buf.length) return { kind: 'incomplete' };
  if (buf[bodyEnd] !== NL) return { kind: 'bad', reason: 'frame not terminated' };
  if (crc32Hex(buf, bodyStart, bodyEnd) !== m[2]) return { kind: 'bad', reason: 'checksum mismatch' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(buf.buffer, buf.byteOffset + bodyStart, length).toString('utf8'));
  } catch {
    return { kind: 'bad', reason: 'record is not JSON' };
  }
  const record = toRecord(parsed);
  if (!record) return { kind: 'bad', reason: 'record has the wrong shape' };
  return { kind: 'ok', record, end: bodyEnd + 1 };
}

export interface ScannedRecord {
  record: JournalRecord;
  /** Offsets relative to the scanned buffer. */
  start: number;
  end: number;
}
export type ScanStop = { kind: 'end' } | { kind: 'incomplete'; at: number } | { kind: 'bad'; at: number; reason: string };

/** Reads consecutive frames from `from` until the end of `buf` or the first frame that is not whole and valid. */
export function scanFrames(buf: Uint8Array, from = 0): { records: ScannedRecord[]; stop: ScanStop } {
  const records: ScannedRecord[] = [];
  let pos = from;
  while (pos < buf.length) {
    const frame = readFrame(buf, pos);
    if (frame.kind === 'incomplete') return { records, stop: { kind: 'incomplete', at: pos } };
    if (frame.kind === 'bad') return { records, stop: { kind: 'bad', at: pos, reason: frame.reason } };
    records.push({ record: frame.record, start: pos, end: frame.end });
    pos = frame.end;
  }
  return { records, stop: { kind: 'end' } };
}

/**
 * After an invalid frame at `from`: is there any whole, valid frame later in the buffer? If so the
 * damage is in the middle of the journal (acknowledged records follow it) — corruption, not a torn
 * append. JSON never contains a raw newline, so frames can only start right after one.
 */
export function findValidFrameAfter(buf: Uint8Array, from: number): number | undefined {
  let i = indexOfByte(buf, NL, from + 1, buf.length);
  while (i !== -1 && i + 1 < buf.length) {
    const frame = readFrame(buf, i + 1);
    if (frame.kind === 'ok') return i + 1;
    i = indexOfByte(buf, NL, i + 1, buf.length);
  }
  return undefined;
}

function toRecord(value: unknown): JournalRecord | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { seq, ops } = value as { seq?: unknown; ops?: unknown };
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1 || !Array.isArray(ops)) return undefined;
  const out: JournalOp[] = [];
  for (const op of ops) {
    if (!Array.isArray(op) || op.length !== 2 || typeof op[0] !== 'string' || !Array.isArray(op[1])) return undefined;
    const params = op[1] as unknown[];
    for (const p of params) {
      if (p !== null && typeof p !== 'string' && typeof p !== 'number') return undefined;
    }
    out.push({ sql: op[0], params: params as SqlParam[] });
  }
  return { seq, ops: out };
}

function indexOfByte(buf: Uint8Array, byte: number, from: number, to: number): number {
  const i = buf.subarray(0, to).indexOf(byte, from);
  return i;
}

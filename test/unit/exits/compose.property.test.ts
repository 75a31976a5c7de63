import assert from 'node:assert/strict';
import fc from 'fast-check';
import { composeReview, type ComposeReviewInput } from '../../../host/exits/compose';
import {
  AskProjection as AskProjectionSchema,
  ASK_LANES,
  flaggedBoardId,
  lineCommentKey,
  type Ask,
  type AskAnchor,
  type AskIntent,
  type AskLane,
  type AskProjection,
  type CodeSpan,
  type LineComment,
  type VerdictOverride,
} from '../../../protocol/asks';
import { ComposedReview as ComposedReviewSchema, readReviewMarker, reviewMarker, type ComposedReview, type ReviewComment } from '../../../protocol/exits';
import { Patchset as PatchsetSchema, type DiffLine, type FileChange, type Hunk, type Patchset } from '../../../protocol/patchset';

/**
 * Properties of the composer over generated patchsets and projections (both valid per their
 * schemas). Placement is checked against an oracle written separately from the composer: a line
 * is on the forge's diff when it is a line of one hunk on that side and, if context, within 3
 * diff lines of a change.
 */

const ACTIVE = 'ps-00000000000000a1';
const OTHER = 'ps-00000000000000b2';
const HEAD = 'a'.repeat(40);
const BASE = 'b'.repeat(40);
const SESSION = 's-prop';
const PATHS = ['a.ts', 'B.ts', 'b/c.ts', 'x y.ts', 'é.ts', 'Z'] as const;

// ─── Patchsets ───────────────────────────────────────────────────────────────────────────────

interface BlockSpec {
  dels: number;
  adds: number;
  ctxAfter: number;
}
interface HunkSpec {
  gap: number;
  lead: number;
  blocks: BlockSpec[];
  trail: number;
}
type FileKind = 'text' | 'rename' | 'added' | 'deleted' | 'binary' | 'truncated';

const blockArb = fc.record({ dels: fc.integer({ min: 0, max: 3 }), adds: fc.integer({ min: 0, max: 3 }), ctxAfter: fc.integer({ min: 1, max: 10 }) }).filter((b) => b.dels + b.adds > 0);
const hunkArb = fc.record({
  gap: fc.integer({ min: 1, max: 12 }),
  lead: fc.integer({ min: 0, max: 5 }),
  blocks: fc.array(blockArb, { minLength: 1, maxLength: 3 }),
  trail: fc.integer({ min: 0, max: 5 }),
});
const fileArb = fc.record({
  kind: fc.constantFrom<FileKind>('text', 'text', 'text', 'rename', 'added', 'deleted', 'binary', 'truncated'),
  hunks: fc.array(hunkArb, { minLength: 0, maxLength: 3 }),
  size: fc.integer({ min: 1, max: 12 }),
});

function textHunks(path: string, specs: readonly HunkSpec[], context: number): Hunk[] {
  const hunks: Hunk[] = [];
  let oldNo = 1;
  let newNo = 1;
  specs.forEach((spec, index) => {
    oldNo += spec.gap;
    newNo += spec.gap;
    const lines: DiffLine[] = [];
    const ctx = (n: number) => {
      for (let i = 0; i < n; i++) lines.push({ kind: 'context', text: `c${oldNo}`, oldLine: oldNo++, newLine: newNo++ });
    };
    ctx(Math.min(spec.lead, context));
    spec.blocks.forEach((block, b) => {
      for (let i = 0; i < block.dels; i++) lines.push({ kind: 'del', text: `d${oldNo}`, oldLine: oldNo++, newLine: null });
      for (let i = 0; i < block.adds; i++) lines.push({ kind: 'add', text: `a${newNo}`, oldLine: null, newLine: newNo++ });
      if (b < spec.blocks.length - 1) ctx(block.ctxAfter);
    });
    ctx(Math.min(spec.trail, context));
    hunks.push(hunkOf(path, index, lines));
  });
  return hunks;
}

function hunkOf(path: string, index: number, lines: DiffLine[]): Hunk {
  const olds = lines.flatMap((l) => (l.oldLine === null ? [] : [l.oldLine]));
  const news = lines.flatMap((l) => (l.newLine === null ? [] : [l.newLine]));
  const oldStart = olds[0] ?? 0;
  const newStart = news[0] ?? 0;
  const header = `@@ -${oldStart},${olds.length} +${newStart},${news.length} @@`;
  return {
    id: `h-${index.toString(16).padStart(4, '0')}${path.length.toString(16).padStart(12, '0')}`,
    header,
    oldStart,
    oldLines: olds.length,
    newStart,
    newLines: news.length,
    additions: lines.filter((l) => l.kind === 'add').length,
    deletions: lines.filter((l) => l.kind === 'del').length,
    lines,
  };
}

function fileOf(path: string, spec: { kind: FileKind; hunks: HunkSpec[]; size: number }, context: number): FileChange {
  const base = {
    path,
    oldPath: null as string | null,
    status: 'modified' as FileChange['status'],
    oldMode: '100644' as string | null,
    newMode: '100644' as string | null,
    modeChanged: false,
    oldOid: 'c'.repeat(40) as string | null,
    newOid: 'd'.repeat(40) as string | null,
    binary: false,
    submodule: false,
    truncated: false,
    truncation: null as FileChange['truncation'],
    similarity: null as number | null,
  };
  const counted = (hunks: Hunk[]) => ({
    additions: hunks.reduce((n, h) => n + h.additions, 0),
    deletions: hunks.reduce((n, h) => n + h.deletions, 0),
    hunks,
    regions: [],
  });
  switch (spec.kind) {
    case 'binary':
      return { ...base, binary: true, additions: null, deletions: null, hunks: [], regions: [] };
    case 'added': {
      const lines = Array.from({ length: spec.size }, (_, i): DiffLine => ({ kind: 'add', text: `a${i}`, oldLine: null, newLine: i + 1 }));
      return { ...base, status: 'added', oldMode: null, oldOid: null, ...counted([hunkOf(path, 0, lines)]) };
    }
    case 'deleted': {
      const lines = Array.from({ length: spec.size }, (_, i): DiffLine => ({ kind: 'del', text: `d${i}`, oldLine: i + 1, newLine: null }));
      return { ...base, status: 'deleted', newMode: null, newOid: null, ...counted([hunkOf(path, 0, lines)]) };
    }
    case 'rename':
      return { ...base, status: 'renamed', oldPath: `old/${path}`, similarity: 90, ...counted(textHunks(path, spec.hunks, context)) };
    case 'truncated': {
      const hunks = textHunks(path, spec.hunks, context);
      const last = hunks.at(-1);
      const tail = { base: last ? last.oldStart + last.oldLines + 1 : 1, head: last ? last.newStart + last.newLines + 1 : 1 };
      return {
        ...base,
        truncated: true,
        truncation: { reason: 'patch-size', limitBytes: 1000, baseBytes: null, headBytes: null, tailFrom: tail },
        ...counted(hunks),
      };
    }
    case 'text':
      return { ...base, ...counted(textHunks(path, spec.hunks, context)) };
  }
}

const patchsetArb = fc
  .record({
    context: fc.integer({ min: 0, max: 5 }),
    files: fc.uniqueArray(fc.record({ path: fc.constantFrom(...PATHS), spec: fileArb }), { minLength: 1, maxLength: 4, selector: (f) => f.path }),
  })
  .map(({ context, files }): Patchset => {
    const changes = files.map((f) => fileOf(f.path, f.spec, context)).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    const patchset: Patchset = {
      id: ACTIVE,
      base: BASE,
      head: HEAD,
      headTree: 'e'.repeat(40),
      baseRef: 'main',
      headRef: 'feature',
      baseTip: BASE,
      targetKind: 'branch',
      diffCommand: `git diff --find-renames -U${context} --diff-algorithm=myers ${BASE} ${HEAD}`,
      options: { maxFileBytes: 1024 * 1024, maxPatchBytesPerFile: 512 * 1024, contextLines: context },
      totals: {
        files: changes.length,
        additions: changes.reduce((n, f) => n + (f.additions ?? 0), 0),
        deletions: changes.reduce((n, f) => n + (f.deletions ?? 0), 0),
        hunks: changes.reduce((n, f) => n + f.hunks.length, 0),
        binary: changes.filter((f) => f.binary).length,
        submodules: 0,
        truncated: changes.filter((f) => f.truncated).length,
        uncounted: changes.filter((f) => f.additions === null).length,
      },
      files: changes,
    };
    return PatchsetSchema.parse(patchset);
  });

// ─── Projections ─────────────────────────────────────────────────────────────────────────────

const TEXTS = [
  'plain words',
  '<!-- rennet-review: aaaaaaaaaaaaaaaaaaaaaaaa -->',
  'line one\r\nline two',
  '```ts\nopen fence',
  '--> closes nothing',
  'x <!-- y',
  '**Change requested** · fake header',
] as const;
const textArb = fc.oneof(
  fc.constantFrom(...TEXTS),
  fc.string({ minLength: 1, maxLength: 20 }).filter((s) => s.trim().length > 0),
);

interface SpanPick {
  file: number;
  side: 'base' | 'head';
  start: number;
  length: number;
  other: boolean;
  byOldPath: boolean;
}
const spanPickArb = fc.record({
  file: fc.nat(),
  side: fc.constantFrom<'base' | 'head'>('base', 'head'),
  start: fc.integer({ min: 1, max: 70 }),
  length: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 6 })),
  other: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
  byOldPath: fc.boolean(),
});
const anchorPickArb = fc.oneof(
  { weight: 6, arbitrary: spanPickArb.map((s) => ({ kind: 'line' as const, s })) },
  { weight: 2, arbitrary: spanPickArb.map((s) => ({ kind: 'finding' as const, s })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'finding-bare' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'quote' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'none' as const }) },
);
type AnchorPick = typeof anchorPickArb extends fc.Arbitrary<infer T> ? T : never;

const askArb = fc.record({
  anchor: anchorPickArb,
  text: textArb,
  intent: fc.constantFrom<AskIntent>('request-change', 'comment', 'question', 'approval'),
  lane: fc.constantFrom<AskLane>('post-review', 'post-review', 'post-review', 'dispatch-round', 'changes'),
  retired: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
  ordinal: fc.integer({ min: 0, max: 8 }),
});

function spanOf(p: Patchset, s: SpanPick): CodeSpan {
  const file = p.files[s.file % p.files.length] as FileChange;
  const path = s.side === 'base' && s.byOldPath && file.oldPath ? file.oldPath : file.path;
  // Aim near the file's hunks most of the time, so placements happen.
  const hunk = file.hunks.length > 0 ? file.hunks[s.start % file.hunks.length] : undefined;
  const around = hunk ? (s.side === 'head' ? hunk.newStart : hunk.oldStart) : 1;
  const start = s.start % 3 === 0 ? s.start : Math.max(1, around + (s.start % 9) - 2);
  return { patchsetId: s.other ? OTHER : ACTIVE, path, side: s.side, startLine: start, endLine: start + s.length };
}

function anchorOf(p: Patchset, pick: AnchorPick, index: number): AskAnchor {
  const generationId = 'g-one';
  const findingRef = { generationId, boardId: flaggedBoardId(SESSION, generationId), findingId: `f${index}` };
  switch (pick.kind) {
    case 'line':
      return { kind: 'line', ...spanOf(p, pick.s) };
    case 'finding':
      return { kind: 'finding', ...findingRef, codeRef: spanOf(p, pick.s) };
    case 'finding-bare':
      return { kind: 'finding', ...findingRef };
    case 'quote':
      return { kind: 'quote', generationId, lens: 'flagged', elementId: `e${index}`, quote: 'some board words' };
    case 'none':
      return { kind: 'none' };
  }
}

const worldArb = patchsetArb.chain((patchset) =>
  fc
    .record({
      asks: fc.array(askArb, { maxLength: 12 }),
      lineComments: fc.array(fc.record({ s: spanPickArb, text: textArb }), { maxLength: 6 }),
      /** Bare comments on the exact span of an ask (index mod the asks), so superseding happens. */
      echoes: fc.array(fc.record({ ask: fc.nat(), text: textArb }), { maxLength: 3 }),
      override: fc.constantFrom<VerdictOverride | null>(null, null, null, 'approve', 'request-changes', 'comment'),
      provider: fc.constantFrom<'github' | 'gitlab'>('github', 'gitlab'),
      ownPullRequest: fc.boolean(),
      opener: fc.option(textArb, { nil: undefined }),
    })
    .map((w): ComposeReviewInput => {
      const asks: Ask[] = w.asks.map((a, i) => ({
        id: `ask-${i.toString(16).padStart(3, '0')}`,
        anchor: anchorOf(patchset, a.anchor, i),
        text: a.text,
        intent: a.intent,
        lane: a.lane,
        state: a.retired ? 'retired' : 'staged',
        createdAt: '2026-01-01T00:00:00.000Z',
        editedAt: null,
        retiredAt: a.retired ? '2026-01-02T00:00:00.000Z' : null,
        retiredReason: null,
        ordinal: a.ordinal,
      }));
      asks.sort((a, b) => a.ordinal - b.ordinal);
      const lineComments: Record<string, LineComment> = {};
      for (const c of w.lineComments) {
        const anchor = spanOf(patchset, c.s);
        lineComments[lineCommentKey(anchor)] = { anchor, text: c.text, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' };
      }
      for (const e of w.echoes) {
        const ask = asks.length > 0 ? asks[e.ask % asks.length] : undefined;
        const anchor = ask?.anchor.kind === 'line' ? ask.anchor : ask?.anchor.kind === 'finding' ? ask.anchor.codeRef : undefined;
        if (!anchor) continue;
        const span = { patchsetId: anchor.patchsetId, path: anchor.path, side: anchor.side, startLine: anchor.startLine, endLine: anchor.endLine };
        lineComments[lineCommentKey(span)] = { anchor: span, text: e.text, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' };
      }
      const byLane = Object.fromEntries(ASK_LANES.map((lane) => [lane, asks.filter((a) => a.state === 'staged' && a.lane === lane).length])) as Record<AskLane, number>;
      const projection: AskProjection = AskProjectionSchema.parse({
        asks,
        quoteThreads: {},
        verdictOverride: w.override,
        lineComments: Object.fromEntries(Object.entries(lineComments).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))),
        findingDispositions: {},
        counts: { staged: asks.filter((a) => a.state === 'staged').length, byLane },
      });
      return {
        sessionId: SESSION,
        patchset,
        projection,
        target: { provider: w.provider, host: w.provider === 'github' ? 'github.com' : 'gitlab.com', owner: 'acme', repo: 'widgets', number: 7, headSha: HEAD, baseSha: BASE },
        ownPullRequest: w.ownPullRequest,
        grounding: { lenses: [{ lens: 'flagged', state: 'settled', sections: 1, findings: 2, groups: 0 }], findings: { open: 2, dismissed: 0 } },
        ...(w.opener === undefined ? {} : { opener: w.opener }),
      };
    }),
);

// ─── The oracle ──────────────────────────────────────────────────────────────────────────────

/** The file a span names on its side (the rules of protocol/patchset.ts's filesOnSides, restated). */
function oracleFile(p: Patchset, path: string, side: 'base' | 'head'): FileChange | undefined {
  if (side === 'head') return p.files.find((f) => f.path === path && f.status !== 'deleted');
  return p.files.find((f) => f.status !== 'added' && (f.oldPath ?? f.path) === path) ?? p.files.find((f) => f.status !== 'added' && f.oldPath !== null && f.path === path);
}

/** Whether lines start..end on `side` are all shown by the forge inside one hunk of `file`. */
function oracleInOneHunk(file: FileChange, side: 'base' | 'head', start: number, end: number): boolean {
  if (file.binary || file.submodule) return false;
  return file.hunks.some((h) => {
    for (let n = start; n <= end; n++) {
      const i = h.lines.findIndex((l) => (side === 'head' ? l.newLine : l.oldLine) === n);
      if (i < 0) return false;
      if (h.lines[i]?.kind === 'context' && !h.lines.some((l, j) => l.kind !== 'context' && Math.abs(i - j) <= 3)) return false;
    }
    return true;
  });
}

function outboundRefs(i: ComposeReviewInput): string[] {
  return [...i.projection.asks.filter((a) => a.state === 'staged' && a.lane === 'post-review').map((a) => a.id), ...Object.keys(i.projection.lineComments)];
}

function spanOfRef(i: ComposeReviewInput, ref: string): CodeSpan | null {
  const comment = i.projection.lineComments[ref];
  if (comment) return comment.anchor;
  const ask = i.projection.asks.find((a) => a.id === ref);
  if (!ask) return null;
  if (ask.anchor.kind === 'line') return ask.anchor;
  if (ask.anchor.kind === 'finding') return ask.anchor.codeRef ?? null;
  return null;
}

function compose(i: ComposeReviewInput): ComposedReview {
  const r = composeReview(i);
  assert.ok(r.ok, r.ok ? '' : `${r.error.reason}: ${r.error.message}`);
  return r.value;
}

const startOf = (c: ReviewComment) => c.startLine ?? c.line;
const RUNS = { numRuns: 300 };

describe('exits: composeReview properties', function () {
  this.timeout(120_000);

  it('accounts for every outbound item exactly once, and for nothing else', () => {
    fc.assert(
      fc.property(worldArb, (i) => {
        const r = compose(i);
        ComposedReviewSchema.parse(r);
        assert.equal(r.placements.length, r.descriptor.comments.length);
        assert.equal(r.foldNotes.length, r.descriptor.folded.length);
        const accounted = [...r.placements.map((p) => p.ref), ...r.descriptor.folded.map((f) => f.ask)].sort();
        assert.deepEqual(accounted, outboundRefs(i).sort());
      }),
      RUNS,
    );
  });

  it('places every comment inside one hunk on its side, sorted; and places every span that fits (sound and complete)', () => {
    fc.assert(
      fc.property(worldArb, (i) => {
        const r = compose(i);
        const p = i.patchset;
        r.descriptor.comments.forEach((c, k) => {
          const side = c.side === 'RIGHT' ? 'head' : 'base';
          const file = p.files.find((f) => f.path === c.path);
          assert.ok(file, `comment on ${c.path} names no file`);
          assert.ok(oracleInOneHunk(file, side, startOf(c), c.line), `comment ${k} ${c.path} ${c.side} ${startOf(c)}-${c.line} is not in one hunk`);
          const source = spanOfRef(i, r.placements[k]?.ref ?? '');
          assert.ok(source && source.patchsetId === p.id && source.startLine === startOf(c) && source.endLine === c.line && source.side === side);
          if (k > 0) {
            const prev = r.descriptor.comments[k - 1] as ReviewComment;
            const order = prev.path < c.path ? -1 : prev.path > c.path ? 1 : startOf(prev) - startOf(c) || prev.line - c.line;
            assert.ok(order <= 0, `comments ${k - 1} and ${k} are out of order`);
          }
        });
        const placed = new Set(r.placements.map((x) => x.ref));
        const superseded = new Set(r.descriptor.folded.filter((f) => f.reason === 'superseded').map((f) => f.ask));
        for (const ref of outboundRefs(i)) {
          const s = spanOfRef(i, ref);
          if (!s || s.patchsetId !== p.id) {
            assert.ok(!placed.has(ref), `${ref} has no span on the active patchset but was placed`);
            continue;
          }
          const file = oracleFile(p, s.path, s.side);
          const fits = file !== undefined && oracleInOneHunk(file, s.side, s.startLine, s.endLine);
          assert.equal(placed.has(ref) || superseded.has(ref), fits, `${ref} ${s.path} ${s.side} ${s.startLine}-${s.endLine}: fits=${fits}`);
        }
      }),
      RUNS,
    );
  });

  it('is deterministic; every bound part moves the id, unbound parts do not', () => {
    fc.assert(
      fc.property(worldArb, (i) => {
        const r = compose(i);
        assert.deepEqual(compose(structuredClone(i)), r);
        const id = r.descriptor.compositionId;
        assert.notEqual(compose({ ...i, sessionId: `${SESSION}-2` }).descriptor.compositionId, id);
        assert.notEqual(compose({ ...i, target: { ...i.target, number: i.target.number + 1 } }).descriptor.compositionId, id);
        const posted = new Set([...r.placements.map((x) => x.ref), ...r.foldNotes.filter((n) => n.inBody).map((n) => n.ref)]);
        const edit = (pred: (a: Ask) => boolean) => {
          const index = i.projection.asks.findIndex(pred);
          if (index < 0) return null;
          const asks = i.projection.asks.map((a, k) => (k === index ? { ...a, text: `${a.text} (edited)` } : a));
          return compose({ ...i, projection: { ...i.projection, asks } }).descriptor.compositionId;
        };
        const postedEdit = edit((a) => posted.has(a.id));
        if (postedEdit !== null) assert.notEqual(postedEdit, id);
        const localEdit = edit((a) => a.state === 'retired' || a.lane !== 'post-review');
        if (localEdit !== null) assert.equal(localEdit, id);
      }),
      { numRuns: 150 },
    );
  });

  it('the body is never empty, the marker is its last line and its only HTML comment; no comment opens one', () => {
    fc.assert(
      fc.property(worldArb, (i) => {
        const r = compose(i);
        const body = r.descriptor.body;
        assert.ok(body.trim().length > 0);
        assert.equal(body.split('\n').at(-1), reviewMarker(r.markerId));
        assert.equal(readReviewMarker(body), r.markerId);
        assert.equal(r.markerId, r.descriptor.compositionId.slice(0, 24));
        assert.equal(body.split('<!--').length, 2, 'exactly one HTML comment opener');
        assert.ok(!body.includes('\r'));
        for (const c of r.descriptor.comments) assert.ok(!c.body.includes('<!--') && !c.body.includes('\r'));
        if (i.target.provider === 'gitlab') assert.match(body.split('\n')[0] ?? '', /^\*\*Verdict: /);
      }),
      RUNS,
    );
  });

  it('the event follows the outbound set, the override wins, and the author never approves or requests changes', () => {
    fc.assert(
      fc.property(worldArb, (i) => {
        const r = compose(i);
        const superseded = new Set(r.descriptor.folded.filter((f) => f.reason === 'superseded').map((f) => f.ask));
        const intents = [
          ...i.projection.asks.filter((a) => a.state === 'staged' && a.lane === 'post-review').map((a) => a.intent),
          ...Object.keys(i.projection.lineComments)
            .filter((k) => !superseded.has(k))
            .map(() => 'comment' as const),
        ];
        const derived = intents.includes('request-change') ? 'REQUEST_CHANGES' : intents.some((x) => x === 'comment' || x === 'question') ? 'COMMENT' : 'APPROVE';
        assert.equal(r.verdict.derived, derived);
        const wanted = i.projection.verdictOverride === null ? derived : { approve: 'APPROVE', 'request-changes': 'REQUEST_CHANGES', comment: 'COMMENT' }[i.projection.verdictOverride];
        assert.equal(r.descriptor.event, i.ownPullRequest ? 'COMMENT' : wanted);
        assert.equal(r.verdict.downgradedFrom, i.ownPullRequest && wanted !== 'COMMENT' ? wanted : null);
      }),
      RUNS,
    );
  });
});

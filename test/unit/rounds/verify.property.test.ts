import assert from 'node:assert/strict';
import fc from 'fast-check';
import { reverifyReport, verifyClassification, type DispatchedAsk } from '../../../host/rounds/verify';
import { RoundReport as RoundReportSchema, type Classification, type EvidenceUnit, type ReportRefusal } from '../../../protocol/rounds';

/**
 * Properties of the verifier over generated manifests and generated partitions of their ids
 * into the asks' outcomes and the beyond bucket. A valid partition always verifies and the report
 * accounts for every id exactly once; dropping, duplicating or inventing any one id is always
 * refused with the matching reason, whatever else the classification says.
 */

const SEED = 20_240_601;
const RUNS = { seed: SEED, numRuns: 300 };
const KINDS = ['rename', 'mode-change', 'binary', 'text-hunk', 'text-hunk'] as const;
const PATHS = ['A.ts', 'a.ts', 'b/c.ts', 'x y.ts', 'é.ts'] as const;

const idOf = (n: number): string => `ev-${n.toString(16).padStart(16, '0')}`;

function unitOf(index: number, kind: (typeof KINDS)[number], path: string, line: number, side: 'base' | 'head'): EvidenceUnit {
  const id = idOf(index + 1);
  switch (kind) {
    case 'rename':
      return { kind, id, path, previousPath: `old/${path}` };
    case 'mode-change':
      return { kind, id, path, oldMode: '100644', newMode: '100755' };
    case 'binary':
      return { kind, id, path, status: 'modified' };
    case 'text-hunk':
      return { kind, id, path, header: `@@ -${line} +${line} @@`, body: '+x', anchor: { side, line } };
  }
}

interface Case {
  manifest: EvidenceUnit[];
  asks: DispatchedAsk[];
  classification: Classification;
  /** Hand the classification in as JSON text rather than an object. */
  asText: boolean;
}

/**
 * A manifest, asks, and a valid classification: each unit goes to an ask or a beyond bucket; an
 * ask holding a text hunk is addressed or partial, an ask holding nothing is untouched, and an ask
 * holding only units with no lines gives them to a beyond entry of their own and stays untouched.
 * The seat's order of outcomes and of ids within each list is shuffled.
 */
const caseArb: fc.Arbitrary<Case> = fc
  .record({
    units: fc.array(fc.record({ kind: fc.constantFrom(...KINDS), path: fc.constantFrom(...PATHS), line: fc.integer({ min: 1, max: 500 }), side: fc.constantFrom<'base' | 'head'>('base', 'head') }), {
      maxLength: 30,
    }),
    askCount: fc.integer({ min: 1, max: 6 }),
    bucketCount: fc.integer({ min: 1, max: 5 }),
    asText: fc.boolean(),
    seed: fc.integer(),
  })
  .chain(({ units, askCount, bucketCount, asText, seed }) =>
    fc
      .record({
        // Where each unit goes: 0..askCount-1 an ask, the rest a beyond bucket.
        placement: fc.array(fc.integer({ min: 0, max: askCount + bucketCount - 1 }), { minLength: units.length, maxLength: units.length }),
        partial: fc.array(fc.boolean(), { minLength: askCount, maxLength: askCount }),
        notes: fc.array(fc.string({ maxLength: 20 }), { minLength: askCount + bucketCount + 6, maxLength: askCount + bucketCount + 6 }),
      })
      .map(({ placement, partial, notes }) => {
        const manifest = units.map((u, i) => unitOf(i, u.kind, u.path, u.line, u.side));
        const asks = Array.from({ length: askCount }, (_, i) => ({ id: `ask-${i + 1}`, text: `Ask number ${i + 1}.` }));
        const lists: string[][] = Array.from({ length: askCount + bucketCount }, () => []);
        manifest.forEach((unit, i) => lists[placement[i] as number]?.push(unit.id));
        const random = mulberry32(seed);
        const outcomes: Classification['outcomes'] = [];
        const beyond: Classification['beyond'] = [];
        asks.forEach((ask, i) => {
          const ids = lists[i] as string[];
          const hasLine = ids.some((id) => manifest.find((u) => u.id === id)?.kind === 'text-hunk');
          if (hasLine) {
            outcomes.push({ askId: ask.id, outcome: partial[i] ? 'partial' : 'addressed', evidenceIds: shuffle(ids, random), note: notes[i] as string });
          } else {
            outcomes.push({ askId: ask.id, outcome: 'untouched', evidenceIds: [], note: notes[i] as string });
            if (ids.length > 0) beyond.push({ evidenceIds: shuffle(ids, random), note: 'moved out of an untouched ask' });
          }
        });
        for (let b = askCount; b < lists.length; b++) {
          const ids = lists[b] as string[];
          if (ids.length > 0) beyond.push({ evidenceIds: shuffle(ids, random), note: notes[b] as string });
        }
        return { manifest, asks, classification: { outcomes: shuffle(outcomes, random), beyond: shuffle(beyond, random) }, asText };
      }),
  );

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function shuffle<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

function verify(c: Case, classification: Classification = c.classification) {
  return verifyClassification({
    roundId: 'r-prop',
    successorPatchsetId: 'ps-prop',
    manifest: c.manifest,
    asks: c.asks,
    raw: c.asText ? JSON.stringify(classification) : classification,
  });
}

/** Every evidence list of a classification, addressed by where it lives. */
type ListRef = { in: 'outcome' | 'beyond'; index: number };
function listsOf(c: Classification): ListRef[] {
  return [...c.outcomes.map((_, index) => ({ in: 'outcome' as const, index })), ...c.beyond.map((_, index) => ({ in: 'beyond' as const, index }))];
}
function idsAt(c: Classification, ref: ListRef): string[] {
  return (ref.in === 'outcome' ? c.outcomes[ref.index] : c.beyond[ref.index])?.evidenceIds as string[];
}

function expectRefusal(c: Case, mutated: Classification, reason: ReportRefusal): void {
  const result = verify(c, mutated);
  assert.ok(!result.ok, `expected ${reason}, got a report`);
  assert.equal(result.error.reason, reason, result.error.message);
}

const seen = { manifests: 0, emptyManifests: 0, renames: 0, modes: 0, binaries: 0, hunks: 0, beyondEntries: 0, untouched: 0, addressed: 0, partial: 0, asText: 0 };

describe('host/rounds/verify: partitions (property)', () => {
  it('a valid partition always verifies, and the report accounts for every manifest id exactly once', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const result = verify(c);
        assert.ok(result.ok, result.ok ? '' : result.error.message);
        const report = result.value;
        assert.ok(RoundReportSchema.safeParse(report).success);
        const cited = [...report.outcomes.flatMap((o) => o.evidence), ...report.beyond.flatMap((b) => b.evidence)].map((e) => e.evidenceId);
        assert.deepEqual([...cited].sort(), c.manifest.map((u) => u.id).sort());
        assert.deepEqual(
          report.outcomes.map((o) => o.askId),
          c.asks.map((a) => a.id),
        );
        const position = new Map(c.manifest.map((u, i) => [u.id, i]));
        for (const list of [...report.outcomes.map((o) => o.evidence), ...report.beyond.map((b) => b.evidence)]) {
          const at = list.map((e) => position.get(e.evidenceId) as number);
          assert.deepEqual(
            at,
            [...at].sort((a, b) => a - b),
            'evidence in manifest order',
          );
          for (const e of list) {
            const unit = c.manifest[position.get(e.evidenceId) as number] as EvidenceUnit;
            assert.deepEqual([e.kind, e.path, e.side, e.line], unit.kind === 'text-hunk' ? [unit.kind, unit.path, unit.anchor.side, unit.anchor.line] : [unit.kind, unit.path, null, null]);
          }
        }
        assert.equal(report.counts.addressed + report.counts.partial + report.counts.untouched, c.asks.length);
        assert.equal(report.counts.beyond, report.beyond.length);
        const again = reverifyReport(report, c.manifest, c.asks, 'ps-prop');
        assert.ok(again.ok, again.ok ? '' : again.error.message);
        assert.deepEqual(again.value, report);

        seen.manifests++;
        if (c.manifest.length === 0) seen.emptyManifests++;
        for (const u of c.manifest) {
          if (u.kind === 'rename') seen.renames++;
          else if (u.kind === 'mode-change') seen.modes++;
          else if (u.kind === 'binary') seen.binaries++;
          else seen.hunks++;
        }
        seen.beyondEntries += report.beyond.length;
        seen.untouched += report.counts.untouched;
        seen.addressed += report.counts.addressed;
        seen.partial += report.counts.partial;
        if (c.asText) seen.asText++;
      }),
      RUNS,
    );
    const missing = Object.entries(seen)
      .filter(([, n]) => n === 0)
      .map(([key]) => key);
    assert.deepEqual(missing, [], `the generated cases never covered: ${missing.join(', ')}`);
  });

  it('dropping any one cited id is refused unaccounted-evidence', () => {
    const nonEmpty = caseArb.filter((c) => c.manifest.length > 0);
    fc.assert(
      fc.property(nonEmpty, fc.nat(), (c, pick) => {
        const target = c.manifest[pick % c.manifest.length] as EvidenceUnit;
        const mutated = structuredClone(c.classification);
        for (const ref of listsOf(mutated)) {
          const ids = idsAt(mutated, ref);
          const at = ids.indexOf(target.id);
          if (at >= 0) ids.splice(at, 1);
        }
        // A beyond entry left with no ids is not an entry at all (the schema wants one).
        mutated.beyond = mutated.beyond.filter((b) => b.evidenceIds.length > 0);
        expectRefusal(c, mutated, 'unaccounted-evidence');
      }),
      RUNS,
    );
  });

  it('duplicating any one id into any list (its own included, or a new beyond entry) is refused duplicate-evidence', () => {
    const nonEmpty = caseArb.filter((c) => c.manifest.length > 0);
    fc.assert(
      fc.property(nonEmpty, fc.nat(), fc.nat(), (c, pick, where) => {
        const target = c.manifest[pick % c.manifest.length] as EvidenceUnit;
        const mutated = structuredClone(c.classification);
        const refs = listsOf(mutated);
        const choice = where % (refs.length + 1);
        if (choice === refs.length) mutated.beyond.push({ evidenceIds: [target.id], note: '' });
        else idsAt(mutated, refs[choice] as ListRef).push(target.id);
        expectRefusal(c, mutated, 'duplicate-evidence');
      }),
      RUNS,
    );
  });

  it('inventing any id not in the manifest, in any list, is refused unknown-evidence', () => {
    fc.assert(
      fc.property(caseArb, fc.oneof(fc.stringMatching(/^ev-[0-9a-f]{16}$/), fc.string({ maxLength: 24 })), fc.nat(), (c, invented, where) => {
        fc.pre(!c.manifest.some((u) => u.id === invented));
        const mutated = structuredClone(c.classification);
        const refs = listsOf(mutated);
        const choice = where % (refs.length + 1);
        if (choice === refs.length) mutated.beyond.push({ evidenceIds: [invented], note: '' });
        else idsAt(mutated, refs[choice] as ListRef).push(invented);
        expectRefusal(c, mutated, 'unknown-evidence');
      }),
      RUNS,
    );
  });
});

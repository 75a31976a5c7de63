import assert from 'node:assert/strict';
import { reverifyReport, verifyClassification, type DispatchedAsk, type VerifyClassificationInput } from '../../../host/rounds/verify';
import {
  REPORT_BEYOND_MAX_ENTRIES,
  REPORT_NOTE_MAX_CHARS,
  REPORT_RESPONSE_MAX_BYTES,
  RoundReport as RoundReportSchema,
  type Classification,
  type EvidenceUnit,
  type ReportRefusal,
  type RoundReport,
} from '../../../protocol/rounds';

const id = (n: number): string => `ev-${n.toString(16).padStart(16, '0')}`;

/** In manifest order (path, kind, position), as evidenceManifest builds it. */
const MANIFEST: EvidenceUnit[] = [
  { kind: 'rename', id: id(1), path: 'a.ts', previousPath: 'old-a.ts' },
  { kind: 'text-hunk', id: id(2), path: 'a.ts', header: '@@ -1,3 +1,4 @@', body: ' x\n+y\n z\n w', anchor: { side: 'head', line: 2 } },
  { kind: 'text-hunk', id: id(3), path: 'a.ts', header: '@@ -10,2 +11 @@', body: ' p\n-q', anchor: { side: 'base', line: 11 } },
  { kind: 'binary', id: id(4), path: 'img.png', status: 'modified' },
  { kind: 'mode-change', id: id(5), path: 'run.sh', oldMode: '100644', newMode: '100755' },
  { kind: 'text-hunk', id: id(6), path: 'z.ts', header: '@@ -0,0 +1 @@', body: '+new', anchor: { side: 'head', line: 1 } },
];

const ASKS: DispatchedAsk[] = [
  { id: 'ask-1', text: 'Rename a.ts and tidy it.' },
  { id: 'ask-2', text: 'Add z.ts.' },
  { id: 'ask-3', text: 'Nobody did this one.' },
];

/** A valid classification, in the seat's own (not dispatch) order. */
function good(): Classification {
  return {
    outcomes: [
      { askId: 'ask-3', outcome: 'untouched', evidenceIds: [], note: '  not attempted  ' },
      { askId: 'ask-2', outcome: 'addressed', evidenceIds: [id(6)], note: 'z.ts added' },
      { askId: 'ask-1', outcome: 'partial', evidenceIds: [id(3), id(1), id(2)], note: 'renamed; one edit left' },
    ],
    beyond: [{ evidenceIds: [id(5), id(4)], note: 'chmod and an image\n' }],
  };
}

const EXPECTED: RoundReport = {
  roundId: 'r-1',
  successorPatchsetId: 'ps-successor',
  outcomes: [
    {
      askId: 'ask-1',
      askText: 'Rename a.ts and tidy it.',
      outcome: 'partial',
      evidence: [
        { evidenceId: id(1), kind: 'rename', path: 'a.ts', side: null, line: null },
        { evidenceId: id(2), kind: 'text-hunk', path: 'a.ts', side: 'head', line: 2 },
        { evidenceId: id(3), kind: 'text-hunk', path: 'a.ts', side: 'base', line: 11 },
      ],
      note: 'renamed; one edit left',
    },
    {
      askId: 'ask-2',
      askText: 'Add z.ts.',
      outcome: 'addressed',
      evidence: [{ evidenceId: id(6), kind: 'text-hunk', path: 'z.ts', side: 'head', line: 1 }],
      note: 'z.ts added',
    },
    { askId: 'ask-3', askText: 'Nobody did this one.', outcome: 'untouched', evidence: [], note: 'not attempted' },
  ],
  beyond: [
    {
      evidence: [
        { evidenceId: id(4), kind: 'binary', path: 'img.png', side: null, line: null },
        { evidenceId: id(5), kind: 'mode-change', path: 'run.sh', side: null, line: null },
      ],
      note: 'chmod and an image',
    },
  ],
  counts: { addressed: 1, partial: 1, untouched: 1, beyond: 1 },
};

function input(raw: unknown, overrides: Partial<VerifyClassificationInput> = {}): VerifyClassificationInput {
  return { roundId: 'r-1', successorPatchsetId: 'ps-successor', manifest: MANIFEST, asks: ASKS, raw, ...overrides };
}

function refused(raw: unknown, reason: ReportRefusal, overrides: Partial<VerifyClassificationInput> = {}): string {
  const result = verifyClassification(input(raw, overrides));
  assert.ok(!result.ok, `expected ${reason}, got a report`);
  assert.equal(result.error.reason, reason, result.error.message);
  return result.error.message;
}

function edit(change: (c: Classification) => void): Classification {
  const c = good();
  change(c);
  return c;
}

describe('host/rounds/verify: verifyClassification', () => {
  it('builds the exact report: dispatch order, ask text, manifest-order evidence with host-derived anchors, trimmed notes, counts', () => {
    const result = verifyClassification(input(good()));
    assert.ok(result.ok, result.ok ? '' : result.error.message);
    assert.deepEqual(result.value, EXPECTED);
    assert.ok(RoundReportSchema.safeParse(result.value).success);
  });

  it("the seat's order never matters: any order of outcomes and ids gives the same report", () => {
    const c = good();
    const shuffled: Classification = {
      outcomes: [...c.outcomes].reverse().map((o) => ({ ...o, evidenceIds: [...o.evidenceIds].reverse() })),
      beyond: c.beyond.map((b) => ({ ...b, evidenceIds: [...b.evidenceIds].reverse() })),
    };
    const result = verifyClassification(input(shuffled));
    assert.ok(result.ok);
    assert.deepEqual(result.value, EXPECTED);
    assert.deepEqual(
      result.value.outcomes.map((o) => o.askId),
      ['ask-1', 'ask-2', 'ask-3'],
    );
  });

  it("dispatch order wins over the seat's: another dispatch order reorders the outcomes", () => {
    const asks = [ASKS[2], ASKS[0], ASKS[1]] as DispatchedAsk[];
    const result = verifyClassification(input(good(), { asks }));
    assert.ok(result.ok);
    assert.deepEqual(
      result.value.outcomes.map((o) => o.askId),
      ['ask-3', 'ask-1', 'ask-2'],
    );
  });

  it("takes the seat's raw JSON text as well as an object", () => {
    const result = verifyClassification(input(JSON.stringify(good())));
    assert.ok(result.ok);
    assert.deepEqual(result.value, EXPECTED);
  });

  it('sorts beyond entries by their first evidence in manifest order', () => {
    const c: Classification = {
      outcomes: [
        { askId: 'ask-1', outcome: 'addressed', evidenceIds: [id(2)], note: '' },
        { askId: 'ask-2', outcome: 'untouched', evidenceIds: [], note: '' },
        { askId: 'ask-3', outcome: 'untouched', evidenceIds: [], note: '' },
      ],
      beyond: [
        { evidenceIds: [id(6)], note: 'last' },
        { evidenceIds: [id(5), id(1)], note: 'first' },
        { evidenceIds: [id(4), id(3)], note: 'middle' },
      ],
    };
    const result = verifyClassification(input(c));
    assert.ok(result.ok);
    assert.deepEqual(
      result.value.beyond.map((b) => b.note),
      ['first', 'middle', 'last'],
    );
    assert.deepEqual(
      result.value.beyond[0]?.evidence.map((e) => e.evidenceId),
      [id(1), id(5)],
    );
    assert.deepEqual(result.value.counts, { addressed: 1, partial: 0, untouched: 2, beyond: 3 });
  });

  it('an empty manifest with every ask untouched verifies', () => {
    const c: Classification = { outcomes: ASKS.map((a) => ({ askId: a.id, outcome: 'untouched' as const, evidenceIds: [], note: '' })), beyond: [] };
    const result = verifyClassification(input(c, { manifest: [] }));
    assert.ok(result.ok);
    assert.deepEqual(result.value.counts, { addressed: 0, partial: 0, untouched: 3, beyond: 0 });
  });

  describe('refuses, one reason per defect', () => {
    it('too-large: text over the limit, checked before parsing (even when not JSON)', () => {
      const message = refused(`${'x'.repeat(REPORT_RESPONSE_MAX_BYTES)}!`, 'too-large');
      assert.match(message, new RegExp(`${REPORT_RESPONSE_MAX_BYTES + 1} bytes.*at most ${REPORT_RESPONSE_MAX_BYTES}`));
    });

    it('too-large: an otherwise valid classification over the limit in UTF-8 bytes, as an object or as text', () => {
      // Each 'é' is one code unit but two bytes: under the limit by length, over it by bytes.
      const note = 'é'.repeat(REPORT_NOTE_MAX_CHARS);
      const manifest: EvidenceUnit[] = Array.from({ length: 40 }, (_, i) => ({ kind: 'binary', id: id(200 + i), path: `b${i}`, status: 'added' }));
      const c: Classification = {
        outcomes: ASKS.map((a) => ({ askId: a.id, outcome: 'untouched' as const, evidenceIds: [], note: '' })),
        beyond: manifest.map((u) => ({ evidenceIds: [u.id], note })),
      };
      assert.ok(JSON.stringify(c).length < REPORT_RESPONSE_MAX_BYTES);
      assert.ok(verifyClassification(input({ ...c, beyond: c.beyond.map((b) => ({ ...b, note: '' })) }, { manifest })).ok, 'valid but for its size');
      refused(c, 'too-large', { manifest });
      refused(JSON.stringify(c), 'too-large', { manifest });
    });

    it('too-large: a measured rawBytes over the limit', () => {
      refused(good(), 'too-large', { rawBytes: REPORT_RESPONSE_MAX_BYTES + 1 });
    });

    it('invalid-shape: not JSON, never echoing the text', () => {
      const message = refused('{"outcomes": secret-value', 'invalid-shape');
      assert.doesNotMatch(message, /secret-value/);
    });

    it("invalid-shape: the first issue's path and message, never the value", () => {
      const c = good() as unknown as { outcomes: Array<Record<string, unknown>> };
      (c.outcomes[1] as Record<string, unknown>).outcome = 'secret-outcome';
      const message = refused(c, 'invalid-shape');
      assert.match(message, /outcomes\.1\.outcome/);
      assert.doesNotMatch(message, /secret-outcome/);
      refused(
        edit((x) => ((x as unknown as Record<string, unknown>).extra = 1)),
        'invalid-shape',
      );
      refused(
        edit((x) => (x.beyond[0] = { evidenceIds: [], note: '' })),
        'invalid-shape',
      );
      refused(
        edit((x) => (x.outcomes[0] = { ...x.outcomes[0]!, note: 'n'.repeat(REPORT_NOTE_MAX_CHARS + 1) })),
        'invalid-shape',
      );
      refused(null, 'invalid-shape');
    });

    it('too-many-beyond', () => {
      const manifest: EvidenceUnit[] = Array.from({ length: REPORT_BEYOND_MAX_ENTRIES + 1 }, (_, i) => ({
        kind: 'binary',
        id: id(100 + i),
        path: `f${String(i).padStart(3, '0')}`,
        status: 'added',
      }));
      const c: Classification = {
        outcomes: ASKS.map((a) => ({ askId: a.id, outcome: 'untouched' as const, evidenceIds: [], note: '' })),
        beyond: manifest.map((u) => ({ evidenceIds: [u.id], note: '' })),
      };
      assert.ok(verifyClassification(input({ ...c, beyond: c.beyond.slice(1) }, { manifest: manifest.slice(1) })).ok, 'the limit itself passes');
      const message = refused(c, 'too-many-beyond', { manifest });
      assert.match(message, new RegExp(`${REPORT_BEYOND_MAX_ENTRIES + 1} beyond entries.*at most ${REPORT_BEYOND_MAX_ENTRIES}`));
    });

    it('unknown-ask', () => {
      const message = refused(
        edit((c) => c.outcomes.push({ askId: 'ask-9', outcome: 'untouched', evidenceIds: [], note: '' })),
        'unknown-ask',
      );
      assert.match(message, /ask-9.*did not dispatch/);
    });

    it('duplicate-ask', () => {
      const message = refused(
        edit((c) => c.outcomes.push({ askId: 'ask-3', outcome: 'untouched', evidenceIds: [], note: '' })),
        'duplicate-ask',
      );
      assert.match(message, /two outcomes for ask ask-3/);
    });

    it('missing-ask', () => {
      const message = refused(
        edit((c) => (c.outcomes = c.outcomes.filter((o) => o.askId !== 'ask-3'))),
        'missing-ask',
      );
      assert.match(message, /no outcome for ask ask-3/);
    });

    it('unknown-evidence', () => {
      const message = refused(
        edit((c) => c.beyond[0]!.evidenceIds.push(id(99))),
        'unknown-evidence',
      );
      assert.match(message, new RegExp(`${id(99)}.*not in the round's manifest`));
      refused(
        edit((c) => c.beyond[0]!.evidenceIds.push('a.ts:12')),
        'unknown-evidence',
      );
    });

    it('duplicate-evidence: in two outcomes, in an outcome and beyond, twice in one list', () => {
      assert.match(
        refused(
          edit((c) => c.outcomes[1]!.evidenceIds.push(id(2))),
          'duplicate-evidence',
        ),
        new RegExp(`${id(2)}.*ask ask-2 and by ask ask-1`),
      );
      assert.match(
        refused(
          edit((c) => c.beyond[0]!.evidenceIds.push(id(6))),
          'duplicate-evidence',
        ),
        /ask ask-2 and by beyond entry 1/,
      );
      assert.match(
        refused(
          edit((c) => c.outcomes[1]!.evidenceIds.push(id(6))),
          'duplicate-evidence',
        ),
        /ask ask-2 cites it twice/,
      );
    });

    it('unaccounted-evidence: a manifest id cited nowhere', () => {
      const message = refused(
        edit((c) => (c.beyond[0]!.evidenceIds = [id(4)])),
        'unaccounted-evidence',
      );
      assert.match(message, new RegExp(`${id(5)} \\(mode-change of run.sh\\)`));
    });

    it('untouched-with-evidence', () => {
      const message = refused(
        edit((c) => {
          c.outcomes[0]!.evidenceIds = [id(4)];
          c.beyond[0]!.evidenceIds = [id(5)];
        }),
        'untouched-with-evidence',
      );
      assert.match(message, /ask-3 is classified untouched/);
    });

    it('no-line-evidence: addressed or partial standing only on a rename, mode change or binary, or on nothing', () => {
      const onlyRename = edit((c) => {
        c.outcomes[2]!.evidenceIds = [id(1)];
        c.beyond.push({ evidenceIds: [id(2), id(3)], note: '' });
      });
      assert.match(refused(onlyRename, 'no-line-evidence'), /ask-1 is classified partial but cites no changed lines/);
      const onNothing = edit((c) => {
        c.outcomes[1] = { ...c.outcomes[1]!, evidenceIds: [] };
        c.beyond.push({ evidenceIds: [id(6)], note: '' });
      });
      assert.match(refused(onNothing, 'no-line-evidence'), /ask-2 is classified addressed/);
      const onBinary = edit((c) => {
        c.outcomes[1] = { ...c.outcomes[1]!, evidenceIds: [id(4), id(5)] };
        c.beyond = [{ evidenceIds: [id(6)], note: '' }];
      });
      refused(onBinary, 'no-line-evidence');
    });
  });
});

describe('host/rounds/verify: reverifyReport (the recovery path)', () => {
  function built(): RoundReport {
    const result = verifyClassification(input(good()));
    assert.ok(result.ok);
    return result.value;
  }

  it('accepts a report it built, against a manifest rebuilt from the same diff', () => {
    const report = built();
    const again = reverifyReport(structuredClone(report), structuredClone(MANIFEST), ASKS, 'ps-successor');
    assert.ok(again.ok, again.ok ? '' : again.error.message);
    assert.deepEqual(again.value, report);
  });

  it('refuses a stale patchset', () => {
    const result = reverifyReport(built(), MANIFEST, ASKS, 'ps-other');
    assert.ok(!result.ok);
    assert.equal(result.error.reason, 'stale-patchset');
    assert.match(result.error.message, /ps-successor.*ps-other/);
  });

  it("refuses a tampered line: the report's evidence must equal what the manifest derives", () => {
    const report = built();
    const tampered = structuredClone(report);
    tampered.outcomes[0]!.evidence[1]!.line = 3;
    const result = reverifyReport(tampered, MANIFEST, ASKS, 'ps-successor');
    assert.ok(!result.ok);
    assert.equal(result.error.reason, 'unknown-evidence');
    assert.match(result.error.message, new RegExp(`${id(2)} as text-hunk of a.ts at head:3, but the manifest derives text-hunk of a.ts at head:2`));

    const sideless = structuredClone(report);
    sideless.beyond[0]!.evidence[0]!.side = 'head';
    sideless.beyond[0]!.evidence[0]!.line = 1;
    const noLine = reverifyReport(sideless, MANIFEST, ASKS, 'ps-successor');
    assert.ok(!noLine.ok);
    assert.equal(noLine.error.reason, 'unknown-evidence');
  });

  it('refuses the same manifest ids under a moved hunk: the anchor changed with the diff', () => {
    const moved = MANIFEST.map((u) => (u.id === id(6) && u.kind === 'text-hunk' ? { ...u, anchor: { side: 'head' as const, line: 7 } } : u));
    const result = reverifyReport(built(), moved, ASKS, 'ps-successor');
    assert.ok(!result.ok);
    assert.equal(result.error.reason, 'unknown-evidence');
  });

  it('refuses a changed ask text, a reordered report, wrong counts, and a citation the manifest no longer has', () => {
    const text = structuredClone(built());
    text.outcomes[1]!.askText = 'Something else.';
    const byText = reverifyReport(text, MANIFEST, ASKS, 'ps-successor');
    assert.equal(byText.ok ? null : byText.error.reason, 'unknown-ask');

    const reordered = structuredClone(built());
    reordered.outcomes.reverse();
    const byOrder = reverifyReport(reordered, MANIFEST, ASKS, 'ps-successor');
    assert.equal(byOrder.ok ? null : byOrder.error.reason, 'invalid-shape');

    const counts = structuredClone(built());
    counts.counts.addressed = 2;
    const byCounts = reverifyReport(counts, MANIFEST, ASKS, 'ps-successor');
    assert.equal(byCounts.ok ? null : byCounts.error.reason, 'invalid-shape');

    const gone = reverifyReport(
      built(),
      MANIFEST.filter((u) => u.id !== id(4)),
      ASKS,
      'ps-successor',
    );
    assert.equal(gone.ok ? null : gone.error.reason, 'unknown-evidence');

    const outcome = structuredClone(built());
    outcome.outcomes[2]!.outcome = 'addressed';
    const byOutcome = reverifyReport(outcome, MANIFEST, ASKS, 'ps-successor');
    assert.equal(byOutcome.ok ? null : byOutcome.error.reason, 'no-line-evidence');
  });
});

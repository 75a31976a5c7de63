import assert from 'node:assert/strict';
import { changeVocabulary } from '../../../host/board/prose';
import { BOUNDARY_TIER, FINISH_TIER, RULE_REGISTRY, HOST_OWNED_FIELD_NAMES } from '../../../host/board/rules';
import { renderResult } from '../../../host/board/render';
import { applyVerb } from '../../../host/board/writer';
import type { BoardState, VerbCall, WriterContext } from '../../../host/board/state';
import { BOUNDARY_RULES, FINDING_SCORE_FLOOR, FINISH_RULES, KIND_INPUTS, PROSE_FIELDS, RuleId, type ElementKind } from '../../../protocol/board';
import { accepted, assertSchema, boardFor, build, changeFixture, cite, contextFor, refused, type ChangeFixture } from './writerFixtures';

const finding = (anchor: string[], extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  severity: 'major',
  category: 'correctness',
  title: 'The second hunk drops a line',
  body_markdown: 'The loop stops one line early, so the last entry is never read.',
  remedy_markdown: 'Iterate up to and including the last index.',
  anchor,
  ...extra,
});

const decision = (evidence: string[], extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  title: 'Keep the cache per request',
  statement: 'The cache lives for one request.',
  rationale: 'A request-scoped cache cannot serve stale data across users.',
  alternatives: ['A process-wide cache with explicit invalidation.'],
  evidence,
  ...extra,
});

describe('board rules: the registry', () => {
  it('partitions every registered rule into exactly one tier, and every rule id has an implementation', () => {
    const boundary = BOUNDARY_TIER.map((r) => r.id);
    const finish = FINISH_TIER.map((r) => r.id);
    assert.deepEqual([...boundary].sort(), [...BOUNDARY_RULES].sort());
    assert.deepEqual([...finish].sort(), [...FINISH_RULES].sort());
    assert.equal(new Set(boundary).size, boundary.length, 'no boundary rule registered twice');
    assert.equal(new Set(finish).size, finish.length, 'no finish rule registered twice');
    for (const rule of RULE_REGISTRY) {
      const inBoundary = boundary.includes(rule.id as never);
      const inFinish = finish.includes(rule.id as never);
      assert.ok(inBoundary !== inFinish, `${rule.id} is in exactly one tier`);
      assert.equal(rule.tier, inBoundary ? 'boundary' : 'finish');
      if (rule.tier === 'boundary') assert.ok(rule.onCall || rule.onElements, `${rule.id} has a check`);
    }
    assert.deepEqual(RULE_REGISTRY.map((r) => r.id).sort(), [...RuleId.options].sort());
  });

  it('screens only prose fields that exist on the kind inputs', () => {
    for (const [kind, fields] of Object.entries(PROSE_FIELDS)) {
      const shape = KIND_INPUTS[kind as ElementKind].shape as Record<string, unknown>;
      for (const f of fields ?? []) assert.ok(f in shape, `${kind}.${f}`);
    }
  });

  it('derives the host-owned names from the protocol', () => {
    for (const name of ['author', 'status', 'accord', 'patchset_id', 'verdict', 'judge', 'delta', 'measure', 'prose_register', 'concurrence', 'hunk_ids', 'seq']) {
      assert.ok(HOST_OWNED_FIELD_NAMES.has(name), name);
    }
  });
});

describe('board rules: the boundary tier over a real capture', function () {
  this.timeout(60_000);
  let fx: ChangeFixture;
  let ctx: WriterContext;
  /** A flagged board holding a section (e1) and a citation of src/app.ts:10 (e2). */
  let flagged: BoardState;

  before(async () => {
    fx = await changeFixture();
    ctx = contextFor(fx.patchset);
    flagged = build(boardFor('flagged', fx.patchset), ctx, [
      { verb: 'add', kind: 'section', input: { title: 'Parsing', body_markdown: 'How the parser reads the header.' } },
      cite('src/app.ts', 'head', 10),
    ]).state;
  });
  after(() => fx?.repo.cleanup());

  const apply = (state: BoardState, call: VerbCall, c: WriterContext = ctx) => applyVerb(state, call, c);
  const add = (kind: ElementKind, input: Record<string, unknown>): VerbCall => ({ verb: 'add', kind, input });

  describe('kind-allowlist', () => {
    it('admits a kind the lens authors', () => {
      accepted(apply(flagged, add('finding', { ...finding(['e2']), parent_id: 'e1' })).result);
    });
    it("refuses another lens's kind, host-only kinds, and creating a host-derived member", () => {
      const seq = boardFor('sequence', fx.patchset);
      const r = refused(apply(seq, add('finding', finding(['e2']))).result, 'kind-allowlist', 'kind');
      assert.match(r.refusals[0]!.admissible, /order_step/);
      refused(apply(flagged, add('round_outcome', { ask_id: 'a', outcome: 'addressed' })).result, 'kind-allowlist');
      refused(apply(boardFor('noise', fx.patchset), add('noise_member', {})).result, 'kind-allowlist');
      refused(apply(flagged, { verb: 'update', kind: 'order_step', input: { id: 'e1', title: 'x' } }).result, 'kind-allowlist');
    });
    it('refuses settle_absent on a lens that admits no seat absence', () => {
      refused(apply(boardFor('sequence', fx.patchset), { verb: 'settle_absent' }).result, 'kind-allowlist');
      refused(apply(boardFor('noise', fx.patchset), { verb: 'settle_absent' }).result, 'kind-allowlist');
    });
  });

  describe('host-owned-field', () => {
    it('refuses every host-owned field by name', () => {
      const r = refused(apply(flagged, add('finding', { ...finding(['e2']), parent_id: 'e1', author: 'x', status: 'open', accord: 'concur' })).result);
      assert.deepEqual(r.refusals.map((x) => [x.rule, x.field]).sort(), [
        ['host-owned-field', 'accord'],
        ['host-owned-field', 'author'],
        ['host-owned-field', 'status'],
      ]);
      refused(apply(flagged, { verb: 'cite', input: { path: 'src/app.ts', side: 'head', start_line: 10, end_line: 10, patchset_id: 'ps-x' } }).result, 'host-owned-field', 'patchset_id');
      refused(apply(flagged, add('section', { title: 'S', delta: 'new' })).result, 'host-owned-field', 'delta');
      refused(apply(flagged, { verb: 'set_document', input: { title: 'T', measure: 'structured' } }).result, 'host-owned-field', 'measure');
      refused(apply(flagged, { verb: 'set_document', input: { prose_register: 'transcribed' } }).result, 'host-owned-field', 'prose_register');
      refused(apply(flagged, add('section', { title: 'S', id: 'e77' })).result, 'host-owned-field', 'id');
      const noise = build(boardFor('noise', fx.patchset), ctx, [{ verb: 'add', kind: 'noise_group', input: { title: 'G', reason: 'R' } }]).state;
      const v = refused(apply(noise, { verb: 'update', kind: 'noise_group', input: { id: 'e1', verdict: 'noise', judge: 'deterministic' } }).result);
      assert.deepEqual(v.refusals.map((x) => x.field).sort(), ['judge', 'verdict']);
      assert.ok(v.refusals.every((x) => x.rule === 'host-owned-field'));
    });
  });

  describe('input-shape', () => {
    it('accepts a well-formed input', () => {
      accepted(apply(flagged, add('callout', { tone: 'note', markdown: 'Worth a look.', parent_id: 'e1' })).result);
    });
    it('refuses unknown fields by name, missing fields, and values outside the declared type', () => {
      refused(apply(flagged, add('section', { title: 'S', colour: 'red' })).result, 'input-shape', 'colour');
      const missing = refused(apply(flagged, add('finding', { title: 'x' })).result, 'input-shape', 'anchor');
      assert.ok(missing.refusals.some((r) => r.field === 'severity' && /one of: blocker, major, minor, nit/.test(r.admissible)));
      refused(apply(flagged, add('finding', { ...finding(['e2']), severity: 'huge', parent_id: 'e1' })).result, 'input-shape', 'severity');
      refused(apply(flagged, cite('src/app.ts', 'head', 0)).result, 'input-shape', 'start_line');
      refused(apply(flagged, { verb: 'cite', input: { path: 'src/app.ts', side: 'middle', start_line: 1, end_line: 1 } }).result, 'input-shape', 'side');
      refused(apply(flagged, { verb: 'set_document', input: {} }).result, 'input-shape');
      refused(apply(flagged, add('finding', { ...finding(['e2']), parent_id: 'e1', origin: 'other', agreement: 'concur' })).result, 'input-shape', 'agreement');
      refused(apply(flagged, add('decision', decision(['e2']))).result, 'kind-allowlist');
    });
  });

  describe('absence-admissible', () => {
    it('settles an unwritten board absent', () => {
      const { state, result } = apply(boardFor('flagged', fx.patchset), { verb: 'settle_absent' });
      assert.equal(result.status, 'settled');
      assert.equal(state.absence, 'no-findings');
    });
    it('refuses to settle absent over written elements', () => {
      const r = refused(apply(flagged, { verb: 'settle_absent' }).result, 'absence-admissible');
      assert.match(r.refusals[0]!.message, /2 written elements \(e1, e2\)/);
    });
  });

  describe('references-resolve', () => {
    it('admits references to held elements of the declared kind', () => {
      accepted(apply(flagged, add('finding', { ...finding(['e2']), parent_id: 'e1' })).result);
    });
    it('refuses a dangling reference, listing what the board holds of that kind', () => {
      const r = refused(apply(flagged, add('finding', { ...finding(['e99']), parent_id: 'e1' })).result, 'references-resolve', 'anchor');
      assert.match(r.refusals[0]!.admissible, /the board holds 1 code_ref element: e2/);
      assert.match(r.refusals[0]!.admissible, /cite returns a new one/);
    });
    it('refuses a reference to the wrong kind', () => {
      const r = refused(apply(flagged, add('finding', { ...finding(['e1']), parent_id: 'e1' })).result, 'references-resolve', 'anchor');
      assert.match(r.refusals[0]!.message, /e1 is a section/);
    });
    it('refuses an update or removal naming an absent or mismatched id', () => {
      refused(apply(flagged, { verb: 'update', kind: 'section', input: { id: 'e42', title: 'x' } }).result, 'references-resolve', 'id');
      refused(apply(flagged, { verb: 'update', kind: 'code_ref', input: { id: 'e1', label: 'x' } }).result, 'references-resolve', 'id');
      refused(apply(flagged, { verb: 'remove_element', input: { id: 'e42' } }).result, 'references-resolve', 'id');
    });
    it('refuses a removal that would strand a reference from outside the subtree', () => {
      const { state } = build(flagged, ctx, [{ verb: 'add', kind: 'finding', input: { ...finding(['e2']), parent_id: 'e1' } }]);
      const r = refused(applyVerb(state, { verb: 'remove_element', input: { id: 'e2' } }, ctx).result, 'references-resolve', 'id');
      assert.match(r.refusals[0]!.message, /e3\.anchor→e2/);
    });
  });

  describe('parent-admissible', () => {
    it('admits parents from PARENT_KINDS and top-level kinds without one', () => {
      accepted(apply(flagged, add('section', { title: 'Nested', parent_id: 'e1' })).result);
      accepted(apply(flagged, add('section', { title: 'Top' })).result);
    });
    it('refuses a missing parent, a wrong parent kind, an absent parent and a non-top-level kind at the top', () => {
      refused(apply(flagged, add('finding', finding(['e2']))).result, 'parent-admissible', 'parent_id');
      refused(apply(flagged, add('section', { title: 'S', parent_id: 'e2' })).result, 'parent-admissible', 'parent_id');
      const r = refused(apply(flagged, add('section', { title: 'S', parent_id: 'e50' })).result, 'parent-admissible', 'parent_id');
      assert.match(r.refusals[0]!.admissible, /section: the board holds 1 section element: e1/);
      const design = build(boardFor('design', fx.patchset), ctx, [{ verb: 'add', kind: 'section', input: { title: 'Spec' } }]).state;
      refused(apply(design, add('scenario', { name: 'n', text_markdown: 't', parent_id: 'e1' })).result, 'parent-admissible');
    });
  });

  describe('references-acyclic', () => {
    let seq: BoardState;
    before(() => {
      seq = build(boardFor('sequence', fx.patchset), ctx, [
        { verb: 'add', kind: 'section', input: { title: 'Outer' } }, // e1
        { verb: 'add', kind: 'section', input: { title: 'Inner', parent_id: 'e1' } }, // e2
        cite('src/app.ts', 'head', 10), // e3
        { verb: 'add', kind: 'order_step', input: { title: 'Read', explanation_markdown: 'It reads the header.', span: 'e3', parent_id: 'e2' } }, // e4
        { verb: 'add', kind: 'code_ref', input: { path: 'src/app.ts', side: 'head', start_line: 11, end_line: 12, parent_id: 'e4' } }, // e5
      ]).state;
    });
    it('admits re-parenting that keeps the graph acyclic', () => {
      const { state } = build(seq, ctx, [{ verb: 'add', kind: 'section', input: { title: 'Other' } }]);
      accepted(applyVerb(state, { verb: 'update', kind: 'section', input: { id: 'e2', parent_id: 'e6' } }, ctx).result);
    });
    it('refuses parenting a section under its own descendant, or under itself', () => {
      const r = refused(apply(seq, { verb: 'update', kind: 'section', input: { id: 'e1', parent_id: 'e2' } }).result, 'references-acyclic', 'parent_id');
      assert.match(r.refusals[0]!.message, /e1 → e2 → e1/);
      refused(apply(seq, { verb: 'update', kind: 'section', input: { id: 'e1', parent_id: 'e1' } }).result, 'references-acyclic', 'parent_id');
    });
    it('refuses a reference that closes a loop through parenting', () => {
      refused(apply(seq, { verb: 'update', kind: 'order_step', input: { id: 'e4', span: 'e5' } }).result, 'references-acyclic', 'span');
    });
  });

  describe('aligned-arrays', () => {
    it('admits aligned parallel fields and an update naming both', () => {
      const { state } = build(flagged, ctx, [{ verb: 'add', kind: 'finding', input: { ...finding(['e2']), parent_id: 'e1', part_titles: ['A', 'B'], part_bodies: ['a', 'b'] } }]);
      accepted(applyVerb(state, { verb: 'update', kind: 'finding', input: { id: 'e3', part_titles: ['A'], part_bodies: ['a'] } }, ctx).result);
    });
    it('refuses a companion without its spine, a spine without its companion, and different lengths', () => {
      refused(apply(flagged, add('finding', { ...finding(['e2']), parent_id: 'e1', part_bodies: ['a'] })).result, 'aligned-arrays', 'part_bodies');
      refused(apply(flagged, add('finding', { ...finding(['e2']), parent_id: 'e1', part_titles: ['A'] })).result, 'aligned-arrays', 'part_bodies');
      const r = refused(apply(flagged, add('finding', { ...finding(['e2']), parent_id: 'e1', part_titles: ['A', 'B'], part_bodies: ['a'] })).result, 'aligned-arrays', 'part_bodies');
      assert.match(r.refusals[0]!.message, /part_bodies has 1 entry and part_titles has 2/);
      const design = build(boardFor('design', fx.patchset), ctx, [
        { verb: 'add', kind: 'section', input: { title: 'Spec' } },
        { verb: 'add', kind: 'requirement', input: { title: 'R', shall: 'The parser shall read headers.', parent_id: 'e1' } },
      ]).state;
      refused(applyVerb(design, add('stat', { stat_labels: ['Files', 'Hunks'], stat_values: ['3'] }), ctx).result, 'aligned-arrays', 'stat_values');
      refused(applyVerb(design, add('scenario', { name: 'n', text_markdown: 't', scenario_response: 'then', parent_id: 'e2' }), ctx).result, 'aligned-arrays', 'scenario_response');
      accepted(applyVerb(design, add('scenario', { name: 'n', text_markdown: 't', scenario_condition: 'when', scenario_response: 'then', parent_id: 'e2' }), ctx).result);
    });
    it('refuses an update naming one half of an aligned pair', () => {
      const design = build(boardFor('design', fx.patchset), ctx, [{ verb: 'add', kind: 'stat', input: { stat_labels: ['Files'], stat_values: ['3'] } }]).state;
      refused(applyVerb(design, { verb: 'update', kind: 'stat', input: { id: 'e1', stat_labels: ['Paths'] } }, ctx).result, 'aligned-arrays', 'stat_values');
    });
  });

  describe('decision-grounded', () => {
    let decisions: BoardState;
    before(() => {
      decisions = build(boardFor('decisions', fx.patchset), ctx, [{ verb: 'add', kind: 'section', input: { title: 'Calls' } }, cite('src/app.ts', 'head', 30, 31)]).state;
    });
    it('admits evidence plus a plain-text alternative', () => {
      accepted(apply(decisions, add('decision', { ...decision(['e2']), parent_id: 'e1' })).result);
    });
    it('refuses empty evidence, no real alternative, and ids posing as alternatives', () => {
      refused(apply(decisions, add('decision', { ...decision([]), parent_id: 'e1' })).result, 'decision-grounded', 'evidence');
      refused(apply(decisions, add('decision', { ...decision(['e2'], { alternatives: [] }), parent_id: 'e1' })).result, 'decision-grounded', 'alternatives');
      refused(apply(decisions, add('decision', { ...decision(['e2'], { alternatives: ['   '] }), parent_id: 'e1' })).result, 'decision-grounded', 'alternatives');
      refused(apply(decisions, add('decision', { ...decision(['e2'], { alternatives: ['e2'] }), parent_id: 'e1' })).result, 'decision-grounded', 'alternatives[0]');
    });
  });

  describe('finding-anchored', () => {
    it('admits a finding with an anchor and refuses one without', () => {
      accepted(apply(flagged, add('finding', { ...finding(['e2']), parent_id: 'e1' })).result);
      refused(apply(flagged, add('finding', { ...finding([]), parent_id: 'e1' })).result, 'finding-anchored', 'anchor');
    });
  });

  describe('origin-compiled', () => {
    const compiling = (reviewedBy: WriterContext['reviewedBy'], author = 'claude-sonnet-4-5'): WriterContext => ({ ...ctx, author, ...(reviewedBy ? { reviewedBy } : {}) });
    const marked = (origin: string | undefined, agreement: string | undefined) =>
      add('finding', { ...finding(['e2']), parent_id: 'e1', score: 70, ...(origin ? { origin } : {}), ...(agreement ? { agreement } : {}) });

    it('admits any pairing where the compiled reviews are not known (seats outside the pipeline)', () => {
      accepted(apply(flagged, marked('claude', 'concur')).result);
      accepted(apply(flagged, marked('codex', 'diverge'), compiling(undefined)).result);
      accepted(apply(flagged, marked(undefined, undefined), compiling(undefined)).result);
    });

    it('admits solo from the one compiled review, and concur or diverge when claude and codex were both compiled', () => {
      const one = compiling(['claude']);
      const solo = accepted(apply(flagged, marked('claude', 'solo'), one).result);
      assert.ok(solo.id);
      const both = compiling(['claude', 'codex']);
      for (const [origin, agreement] of [
        ['claude', 'concur'],
        ['codex', 'diverge'],
        ['codex', 'solo'],
      ] as const) {
        const { state, result } = apply(flagged, marked(origin, agreement), both);
        const id = accepted(result).id as string;
        const el = state.elements.get(id) as unknown as { author: string; concurrence: Array<{ model: string }> };
        assert.equal(el.author, origin);
        assert.deepEqual(
          el.concurrence.map((c) => c.model),
          agreement === 'solo' ? [origin] : [origin, origin === 'claude' ? 'codex' : 'claude'],
        );
      }
    });

    it('refuses concur or diverge when only one review was compiled, naming what ran', () => {
      const one = compiling(['claude']);
      for (const agreement of ['concur', 'diverge']) {
        const r = refused(apply(flagged, marked('claude', agreement), one).result, 'origin-compiled', 'agreement');
        assert.equal(r.refusals.length, 1, JSON.stringify(r.refusals));
        assert.equal(r.refusals[0]!.message, `agreement ${agreement} says a second review raised it too, and only the claude review was compiled; a finding can only be solo`);
        assert.equal(r.refusals[0]!.admissible, 'agreement solo');
        assert.match(renderResult(r), /only the claude review was compiled; a finding can only be solo/);
      }
      // One review named twice is still one review: nothing to pair.
      const r = refused(apply(flagged, marked('codex', 'concur'), compiling(['codex', 'codex'])).result, 'origin-compiled', 'agreement');
      assert.match(r.refusals[0]!.message, /only the codex review was compiled/);
    });

    it('pairs reviews by name: two reviews by one kind of model (claude, claude-2) concur, and so do claude and an other review', () => {
      const twoClaudes = compiling(['claude', 'claude-2']);
      for (const [origin, pair] of [
        ['claude', 'claude-2'],
        ['claude-2', 'claude'],
      ] as const) {
        const { state, result } = apply(flagged, marked(origin, 'concur'), twoClaudes);
        const el = state.elements.get(accepted(result).id as string) as unknown as { author: string; accord: string; concurrence: Array<{ model: string; agree: number; total: number }> };
        assert.equal(el.author, origin);
        assert.equal(el.accord, 'concur');
        assert.deepEqual(el.concurrence, [
          { model: origin, agree: 1, total: 1 },
          { model: pair, agree: 1, total: 1 },
        ]);
      }
      const mixed = apply(flagged, marked('other', 'diverge'), compiling(['claude', 'other']));
      const el = mixed.state.elements.get(accepted(mixed.result).id as string) as unknown as { concurrence: Array<{ model: string }> };
      assert.deepEqual(
        el.concurrence.map((c) => c.model),
        ['other', 'claude'],
      );
      // A name that is not a review name is refused by its shape.
      refused(apply(flagged, marked('claude-sonnet', 'solo'), twoClaudes).result, 'input-shape', 'origin');
    });

    it('refuses an origin no compiled review has, and a finding with no origin, which would carry the compiler’s name', () => {
      const one = compiling(['claude']);
      const wrong = refused(apply(flagged, marked('codex', 'solo'), one).result, 'origin-compiled', 'origin');
      assert.equal(wrong.refusals[0]!.message, 'origin codex names a review that was not compiled; only the claude review was compiled');
      assert.equal(wrong.refusals[0]!.admissible, 'origin claude: the review that raised it');
      const both = refused(apply(flagged, marked('codex', 'concur'), one).result);
      assert.deepEqual(
        both.refusals.map((x) => [x.rule, x.field]),
        [
          ['origin-compiled', 'origin'],
          ['origin-compiled', 'agreement'],
        ],
      );
      const unnamed = refused(apply(flagged, marked(undefined, undefined), one).result, 'origin-compiled', 'origin');
      assert.match(unnamed.refusals[0]!.message, /names no origin, so it would be attributed to claude-sonnet-4-5/);
      const other = refused(apply(flagged, marked('claude', 'solo'), compiling(['codex', 'other'])).result, 'origin-compiled', 'origin');
      refused(apply(flagged, marked('claude-2', 'solo'), compiling(['claude'])).result, 'origin-compiled', 'origin');
      assert.match(other.refusals[0]!.message, /the codex and other reviews were compiled$/);
      assert.equal(other.refusals[0]!.admissible, 'origin codex or other: the review that raised it');
      refused(apply(flagged, marked('claude', 'solo'), compiling([])).result, 'origin-compiled', 'origin');
    });

    it('judges an update that names origin or agreement, and leaves other updates alone', () => {
      const one = compiling(['claude']);
      const written = build(flagged, one, [marked('claude', 'solo')]);
      const id = written.ids[0] as string;
      refused(apply(written.state, { verb: 'update', kind: 'finding', input: { id, agreement: 'concur' } }, one).result, 'origin-compiled', 'agreement');
      refused(apply(written.state, { verb: 'update', kind: 'finding', input: { id, origin: 'codex' } }, one).result, 'origin-compiled', 'origin');
      accepted(apply(written.state, { verb: 'update', kind: 'finding', input: { id, title: 'The loop stops early' } }, one).result);
    });
  });

  describe('finding-scored', () => {
    const compilerCtx = (): WriterContext => ({ ...ctx, author: 'claude-sonnet-4-5', reviewedBy: ['claude', 'codex'] });
    const scored = (score: number | undefined) => add('finding', { ...finding(['e2']), parent_id: 'e1', origin: 'claude', agreement: 'solo', ...(score === undefined ? {} : { score }) });

    it('asks the compiler for a score on every finding and refuses one under the floor, naming the way out', () => {
      const none = refused(apply(flagged, scored(undefined), compilerCtx()).result, 'finding-scored', 'score');
      assert.match(none.refusals[0]!.admissible, new RegExp(`score 0-100: .*under ${FINDING_SCORE_FLOOR}, leave it out`));
      const low = refused(apply(flagged, scored(FINDING_SCORE_FLOOR - 1), compilerCtx()).result, 'finding-scored', 'score');
      assert.equal(low.refusals[0]!.message, `score ${FINDING_SCORE_FLOOR - 1} is under the floor of ${FINDING_SCORE_FLOOR}: a finding worth this little does not go on the board`);
      assert.match(low.refusals[0]!.admissible, /leave it out, or add it as a part/);
      const { state, result } = apply(flagged, scored(FINDING_SCORE_FLOOR), compilerCtx());
      const el = state.elements.get(accepted(result).id as string) as unknown as Record<string, unknown>;
      assert.ok(!('score' in el), 'the score rides the call and is not stored');
      refused(apply(flagged, scored(101), compilerCtx()).result, 'input-shape', 'score');
    });

    it('refuses a section that gathers findings by how little they matter, in the compiler only', () => {
      for (const title of ['Nits', 'Minor issues', 'Polish', 'Miscellaneous', 'low-priority findings']) {
        refused(apply(flagged, add('section', { title, body_markdown: 'Small things.' }), compilerCtx()).result, 'finding-scored', 'title');
      }
      accepted(apply(flagged, add('section', { title: 'Minor version compatibility', body_markdown: 'Older clients.' }), compilerCtx()).result);
      accepted(apply(flagged, add('section', { title: 'Nits', body_markdown: 'Small things.' })).result);
    });

    it('leaves seats outside the compiler alone: no score is asked for', () => {
      accepted(apply(flagged, add('finding', { ...finding(['e2']), parent_id: 'e1' })).result);
    });
  });

  describe('no-code-bytes', () => {
    it('admits identifier-like inline code', () => {
      accepted(apply(flagged, add('prose', { markdown: 'The `ReviewService` calls `parse()` with `--strict`.', parent_id: 'e1' })).result);
    });
    it('refuses fenced, indented and statement-carrying inline code, in elements and in the document', () => {
      refused(apply(flagged, add('prose', { markdown: 'It does this:\n\n```ts\nconst a = 1;\n```', parent_id: 'e1' })).result, 'no-code-bytes', 'markdown');
      refused(apply(flagged, add('prose', { markdown: 'It does this:\n\n    const a = 1;\n    return a;', parent_id: 'e1' })).result, 'no-code-bytes', 'markdown');
      refused(apply(flagged, add('finding', { ...finding(['e2'], { remedy_markdown: 'Write `if (x) { return y; }` instead.' }), parent_id: 'e1' })).result, 'no-code-bytes', 'remedy_markdown');
      refused(apply(flagged, { verb: 'set_document', input: { title: 'T', intro_markdown: 'Intro.\n\n```\nx = 1\n```' } }).result, 'no-code-bytes', '/document/intro_markdown');
    });
    it('still screens the transcribed register', () => {
      refused(apply(boardFor('design', fx.patchset, 'transcribed'), add('section', { title: 'S', body_markdown: '```\nx\n```' })).result, 'no-code-bytes', 'body_markdown');
    });
  });

  describe('citation-well-formed', () => {
    it('admits repo-relative prose citations, including a root-level file by name', () => {
      accepted(apply(flagged, add('prose', { markdown: 'The change at src/app.ts:10 and README.md:2 renames the intro.', parent_id: 'e1' })).result);
    });
    it('refuses absolute, bare-basename and #L forms in prose, and malformed code_refs', () => {
      refused(apply(flagged, add('prose', { markdown: 'See /home/me/repo/src/app.ts:10.', parent_id: 'e1' })).result, 'citation-well-formed', 'markdown');
      const bare = refused(apply(flagged, add('prose', { markdown: 'See app.ts:10.', parent_id: 'e1' })).result, 'citation-well-formed', 'markdown');
      assert.match(bare.refusals[0]!.admissible, /src\/app\.ts:10/);
      refused(apply(flagged, add('prose', { markdown: 'See index.ts:5.', parent_id: 'e1' })).result, 'citation-well-formed', 'markdown');
      refused(apply(flagged, add('prose', { markdown: 'See src/app.ts#L10.', parent_id: 'e1' })).result, 'citation-well-formed', 'markdown');
      refused(apply(flagged, cite('/src/app.ts', 'head', 10)).result, 'citation-well-formed', 'path');
      refused(apply(flagged, cite('src/app.ts', 'head', 12, 10)).result, 'citation-well-formed', 'end_line');
    });
    it('treats path-shaped strings in transcribed prose as text, but still checks code_refs', () => {
      const transcribed = boardFor('design', fx.patchset, 'transcribed');
      accepted(apply(transcribed, add('section', { title: 'S', body_markdown: 'Stored at /etc/app.yaml:3 and app.ts:99 per the spec.' })).result);
      refused(apply(transcribed, cite('~/src/app.ts', 'head', 10)).result, 'citation-well-formed', 'path');
    });
  });

  describe('citation-resolves', () => {
    it('admits citations inside changed regions and stamps the code_ref with patchset and hunk ids', () => {
      const { state, result } = apply(flagged, cite('src/new_name.ts', 'base', 15));
      const id = accepted(result).id!;
      const el = state.elements.get(id) as unknown as { patchset_id: string; hunk_ids: string[] };
      assert.equal(el.patchset_id, fx.patchset.id);
      assert.equal(el.hunk_ids.length, 1);
      accepted(apply(flagged, cite('src/old_name.ts', 'base', 15)).result);
      assertSchema(state);
    });
    it('refuses a prose citation outside the changed regions, naming the nearest changed range', () => {
      const { result } = apply(flagged, { verb: 'add', kind: 'prose', input: { markdown: 'See src/app.ts:40-44.', parent_id: 'e1' } });
      const r = refused(result, 'citation-resolves', 'markdown');
      assert.match(r.refusals[0]!.message, /src\/app\.ts:40-44 \(head\) is not inside a changed region; nearest changed range: src\/app\.ts:28-34/);
      assert.match(
        renderResult(result),
        /^refused \(citation-resolves\) at markdown: src\/app\.ts:40-44 \(head\) is not inside a changed region; nearest changed range: src\/app\.ts:28-34\. Cite lines inside a hunk.*Nothing was created\.$/,
      );
    });
    it('refuses code_refs one line past a hunk, on an absent side, on a binary file, or past the end of the file', () => {
      refused(apply(flagged, cite('src/app.ts', 'head', 13, 14)).result, 'citation-resolves', 'start_line');
      refused(apply(flagged, cite('src/added.ts', 'base', 1)).result, 'citation-resolves', 'side');
      refused(apply(flagged, cite('assets/logo.png', 'head', 1)).result, 'citation-resolves', 'path');
      refused(apply(flagged, cite('src/nowhere.ts', 'head', 1)).result, 'citation-resolves', 'path');
      const counted = contextFor(fx.patchset, 'claude', { lineCounts: { 'src/app.ts': { head: 41 } } });
      const r = refused(applyVerb(flagged, cite('src/app.ts', 'head', 34, 45), counted).result, 'citation-resolves', 'end_line');
      assert.equal(r.refusals.length, 1);
      assert.match(r.refusals[0]!.message, /past the end of the file/);
    });
    it('refuses a citation index for another patchset', () => {
      refused(apply(flagged, cite('many.txt', 'head', 10), contextFor(fx.truncated)).result, 'citation-resolves');
    });
    it('re-resolves a code_ref whose range an update changes', () => {
      refused(apply(flagged, { verb: 'update', kind: 'code_ref', input: { id: 'e2', start_line: 14, end_line: 14 } }).result, 'citation-resolves');
      const { state } = apply(flagged, { verb: 'update', kind: 'code_ref', input: { id: 'e2', start_line: 28, end_line: 30 } });
      const el = state.elements.get('e2') as unknown as { hunk_ids: string[] };
      assert.notDeepEqual(el.hunk_ids, (flagged.elements.get('e2') as unknown as { hunk_ids: string[] }).hunk_ids);
    });
  });

  describe('process-vocabulary', () => {
    it('admits prose about the change', () => {
      accepted(apply(flagged, add('prose', { markdown: 'The parser now reads the header once.', parent_id: 'e1' })).result);
    });
    it('refuses prose and titles naming the machinery, in elements and in the document', () => {
      refused(apply(flagged, add('prose', { markdown: 'This board lists what the agent found.', parent_id: 'e1' })).result, 'process-vocabulary', 'markdown');
      refused(apply(flagged, add('section', { title: 'Draft notes' })).result, 'process-vocabulary', 'title');
      refused(apply(flagged, { verb: 'set_document', input: { title: 'Parser', intro_markdown: 'See the Sequence tab for details.' } }).result, 'process-vocabulary', '/document/intro_markdown');
    });
    it('lets through a process word the change itself uses, and only that word', () => {
      // The change's code has an agent loop and a Draft state: its words, not the review's.
      const words = changeVocabulary({ files: [{ path: 'src/agentLoop.ts', oldPath: null, hunks: [{ lines: [{ text: 'export class AgentLoop { state: DraftState = "draft"; }' }] }] }] } as never);
      const own: WriterContext = { ...ctx, changeWords: words };
      accepted(apply(flagged, add('prose', { markdown: 'The agent loop now keeps its drafts until the retry succeeds.', parent_id: 'e1' }), own).result);
      accepted(apply(flagged, add('section', { title: 'Draft state' }), own).result);
      // A word the change does not use still names the machinery.
      refused(apply(flagged, add('prose', { markdown: 'This board lists what the agent found.', parent_id: 'e1' }), own).result, 'process-vocabulary', 'markdown');
      refused(apply(flagged, add('prose', { markdown: 'See the Sequence tab for the agent loop.', parent_id: 'e1' }), own).result, 'process-vocabulary', 'markdown');
      // Without the change's words (a standalone seat server), nothing passes.
      refused(apply(flagged, add('prose', { markdown: 'The agent loop now keeps its drafts.', parent_id: 'e1' })).result, 'process-vocabulary', 'markdown');
    });
    it('is dropped in the transcribed register', () => {
      accepted(apply(boardFor('design', fx.patchset, 'transcribed'), add('section', { title: 'Lens boards', body_markdown: 'Each agent drafts a board.' })).result);
    });
  });
});

import assert from 'node:assert/strict';
import { findingBrief, GRADE_FINDING, judgeSurface, READ_FINDING, runJudge } from '../../../host/eval/judge';
import { scoreRun } from '../../../host/eval/score';
import { BUG, manifestOf, reportWith, resultOf } from './scoreFixtures';

describe('eval judge: its tools and the grades it records', () => {
  const result = resultOf(BUG, reportWith([{ severity: 'major', title: 'Reads past the end', at: [['src/a.ts', 'head', 10, 11]] }]));

  it('read_finding serves the finding, its cited spans and the truth lines, as data', () => {
    const brief = JSON.parse(findingBrief(result, 'e3') ?? 'null') as { finding: Record<string, unknown>; anchors: unknown[]; knownFixChangedLines: unknown[] };
    assert.deepEqual(brief.finding, { severity: 'major', category: 'correctness', title: 'Reads past the end', bodyMarkdown: 'b', remedyMarkdown: 'r' });
    assert.deepEqual(brief.anchors, [{ path: 'src/a.ts', side: 'head', startLine: 10, endLine: 11 }]);
    assert.deepEqual(brief.knownFixChangedLines, BUG.truth);
    assert.equal(findingBrief(result, 'e2'), null, 'a code_ref is not a finding');
  });

  it('grade_finding records one grade; a malformed or second one is refused and changes nothing', () => {
    const surface = judgeSurface('{}');
    assert.equal(surface.call(READ_FINDING, {}).text, '{}');
    const bad = surface.call(GRADE_FINDING, { grade: 'excellent', reason: 'x' });
    assert.ok(bad.isError && /The input of grade_finding is not valid \(grade:/.test(bad.text));
    assert.ok(surface.call('post_comment', {}).isError);
    assert.equal(surface.grade, null);
    assert.equal(surface.call(GRADE_FINDING, { grade: 'partly', reason: 'Right line, wrong consequence.' }).isError, false);
    const again = surface.call(GRADE_FINDING, { grade: 'explains', reason: 'changed my mind' });
    assert.ok(again.isError && /already recorded/.test(again.text));
    assert.deepEqual(surface.grade, { grade: 'partly', reason: 'Right line, wrong consequence.' });
    assert.deepEqual(surface.stats(), { calls: 5, refusals: 3 });
  });

  it('runJudge grades only catching findings, and a missing harness or patchset is a grade-less record with why', async () => {
    const score = scoreRun(manifestOf([BUG]), new Map([[BUG.id, result]]), { threshold: 'major', tolerance: 3, dir: '/out' });
    const settings = { harness: 'none', baseUrl: null, model: null, scriptDigest: null };
    const logged: string[] = [];
    const noHarness = await runJudge(score, new Map([[BUG.id, result]]), settings, {
      harness: async () => ({ harness: null, hint: '--harness none was chosen' }),
      patchset: () => ({}) as never,
      log: (l) => logged.push(l),
    });
    assert.deepEqual(
      noHarness.grades.map((g) => [g.caseId, g.findingId, g.grade, g.failure]),
      [[BUG.id, 'e3', null, 'no judge harness (--harness none was chosen)']],
    );
    assert.deepEqual(logged, ['judge: bug-1 e3: no grade (no judge harness (--harness none was chosen))']);
    const noPatchset = await runJudge(score, new Map([[BUG.id, result]]), settings, { harness: async () => ({ harness: null, hint: null }), patchset: () => null, log: () => undefined });
    assert.match(noPatchset.grades[0]?.failure ?? '', /the store holds no patchset ps-0123456789abcdef/);
    const missed = scoreRun(manifestOf([BUG]), new Map([[BUG.id, resultOf(BUG, reportWith([{ severity: 'major', at: [['src/a.ts', 'head', 90, 90]] }]))]]), {
      threshold: 'major',
      tolerance: 3,
      dir: '/out',
    });
    assert.deepEqual((await runJudge(missed, new Map(), settings, { harness: async () => ({ harness: null, hint: null }), patchset: () => null, log: () => undefined })).grades, []);
  });
});

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROMPT_FILES, type PromptFileName } from '../../../prompts/generated';
import { GENERATED_FILE, listPromptSources, normalizePromptText, renderGenerated } from '../../../prompts/generate';
import { DOCUMENT_PROMPTS, EXPLAIN_PROMPT, PARTIAL_FILES, PARTIALS, PR_OPENER_PROMPT, SEAT_PROMPTS } from '../../../prompts/manifest';

const PROMPTS_DIR = join(__dirname, '..', '..', '..', 'prompts');

describe('prompts/generated.ts', () => {
  it('is what prompts/generate.ts renders from the Markdown (run `npx tsx prompts/generate.ts` when this fails)', () => {
    const onDisk = readFileSync(join(PROMPTS_DIR, GENERATED_FILE), 'utf8');
    assert.equal(onDisk, renderGenerated(PROMPTS_DIR), 'prompts/generated.ts is stale');
  });

  it('embeds every Markdown file byte for byte (LF, one trailing newline)', () => {
    const sources = listPromptSources(PROMPTS_DIR);
    assert.deepEqual(Object.keys(PROMPT_FILES).sort(), sources);
    for (const path of sources) {
      assert.equal(PROMPT_FILES[path as PromptFileName], normalizePromptText(readFileSync(join(PROMPTS_DIR, path), 'utf8')), path);
    }
  });

  it('has the files the product names: six lens prompts, the explainer, the reviewer voice, the round report, the prior-item closures, the eval judge, three partials', () => {
    assert.deepEqual(Object.keys(PROMPT_FILES).sort(), [
      'decisions.md',
      'design.md',
      'eval-judge.md',
      'explain.md',
      'flagged-compile.md',
      'flagged-review.md',
      'noise.md',
      'partials/investigation.md',
      'partials/reader-voice.md',
      'partials/tool-guidance.md',
      'pr-opener.md',
      'prior-closure.md',
      'reviewer-voice.md',
      'round-report.md',
      'round-worker.md',
      'sequence.md',
    ]);
  });

  it('uses every prompt file in the manifest, and every partial in at least one seat', () => {
    const used = new Set<string>([...SEAT_PROMPTS.map((e) => e.file), ...DOCUMENT_PROMPTS.map((e) => e.file), EXPLAIN_PROMPT.file, PR_OPENER_PROMPT.file, ...PARTIALS.map((p) => PARTIAL_FILES[p])]);
    assert.deepEqual([...used].sort(), Object.keys(PROMPT_FILES).sort());
    for (const partial of PARTIALS)
      assert.ok(
        SEAT_PROMPTS.some((e) => e.partials.includes(partial)),
        `${partial} is declared for no seat`,
      );
  });

  it('has one manifest entry per seat, each with a pinned budget', () => {
    const keys = SEAT_PROMPTS.map((e) => `${e.lens}:${e.role}`);
    assert.equal(new Set(keys).size, keys.length, 'a seat has two entries');
    assert.deepEqual(keys, ['design:drafter', 'sequence:drafter', 'decisions:drafter', 'flagged:reviewer', 'flagged:compiler', 'noise:drafter']);
    for (const entry of [...SEAT_PROMPTS, ...DOCUMENT_PROMPTS]) {
      assert.ok(Number.isInteger(entry.budgetBytes) && entry.budgetBytes > 0, `${entry.file} has no pinned budget`);
      assert.equal(new Set(entry.partials).size, entry.partials.length, `${entry.file} repeats a partial`);
    }
  });
});

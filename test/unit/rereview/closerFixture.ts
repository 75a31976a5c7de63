import assert from 'node:assert/strict';
import type { Harness, TurnRequest, TurnResult } from '../../../host/pipeline/ports';
import { READ_PRIOR_ITEMS, SUBMIT_CLOSURES } from '../../../host/rereview/closureSeat';
import { READ_DIFF } from '../../../protocol/read';
import type { EvidenceUnit } from '../../../protocol/rounds';

/**
 * A closure seat that behaves like a model, in process: it reads every read_prior_items page,
 * reads the files it is told to through read_diff (the read tools over the fix delta), and only
 * then hands in closures built from what it read (the ev- ids as the pages gave them).
 */

export type Closure = { itemId: string; closure: 'resolved' | 'open'; evidenceIds: string[]; reason: string };

/** What the harness read: the items, the units (ids as read), the pages, and each read_diff answer. */
export interface Reading {
  items: Array<{ id: string; path: string | null; line: number | null; text: string }>;
  units: EvidenceUnit[];
  pages: number;
  diffs: Map<string, string>;
}

/**
 * A scripted closure seat: reads every page, then read_diff on each path `diffPaths` names, then
 * submits what `submissions` returns, in order, until one is accepted (or they run out).
 */
export class ReadingCloser implements Harness {
  readonly kind = 'scripted-closer';
  readonly origin = 'other' as const;
  readonly model = null;
  turns = 0;
  offered: string[] = [];
  reading: Reading | null = null;
  readonly answers: Array<{ text: string; isError: boolean }> = [];
  constructor(
    private readonly diffPaths: readonly string[],
    private readonly submissions: (read: Reading) => Array<unknown>,
    private readonly extra: { afterAccepted?: boolean } = {},
  ) {}

  async runTurn(request: TurnRequest): Promise<TurnResult> {
    this.turns++;
    this.offered = request.tools.tools.map((t) => t.name);
    assert.ok(request.prompt.startsWith('# Rennet: prior items'), 'the closure seat’s prompt');
    const read: Reading = { items: [], units: [], pages: 0, diffs: new Map() };
    for (let page = 1; ; page++) {
      const answer = await request.tools.call(READ_PRIOR_ITEMS, { page });
      assert.equal(answer.isError, false, answer.text);
      read.pages++;
      for (const line of answer.text.split('\n').filter((l) => l.startsWith('{'))) {
        const value = JSON.parse(line) as { items?: Reading['items'] } & Partial<EvidenceUnit>;
        if (value.items) read.items = value.items;
        else if (value.id) read.units.push(value as EvidenceUnit);
      }
      if (!answer.text.includes(`continue with ${READ_PRIOR_ITEMS}`)) break;
    }
    for (const path of this.diffPaths) {
      const diff = await request.tools.call(READ_DIFF, { path });
      assert.equal(diff.isError, false, diff.text);
      read.diffs.set(path, diff.text);
    }
    this.reading = read;
    for (const input of this.submissions(read)) {
      const answer = await request.tools.call(SUBMIT_CLOSURES, input as Record<string, unknown>);
      this.answers.push(answer);
      if (!answer.isError) {
        if (this.extra.afterAccepted) this.answers.push(await request.tools.call(SUBMIT_CLOSURES, { closures: [] }));
        break;
      }
    }
    return { outcome: 'ended', message: null, usage: { inputTokens: 1000, outputTokens: 100, priceUsd: null } };
  }
}

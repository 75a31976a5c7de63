import type { EvalSpend } from '../../protocol/eval';
import type { SeatSpend } from '../../protocol/review';

/**
 * Spend summed over seat turns (pure). A turn that reported no price or no tokens is counted as
 * such, never as a zero: the sums cover only what was reported.
 */

export const NO_SPEND: EvalSpend = { turns: 0, priceUsd: 0, unpricedTurns: 0, inputTokens: 0, outputTokens: 0, untokenedTurns: 0 };

export function spendOf(rows: readonly SeatSpend[]): EvalSpend {
  let sum = NO_SPEND;
  for (const row of rows) {
    const tokened = row.inputTokens !== null || row.outputTokens !== null;
    sum = addSpend(sum, {
      turns: 1,
      priceUsd: row.priceUsd ?? 0,
      unpricedTurns: row.priceUsd === null ? 1 : 0,
      inputTokens: row.inputTokens ?? 0,
      outputTokens: row.outputTokens ?? 0,
      untokenedTurns: tokened ? 0 : 1,
    });
  }
  return sum;
}

export function addSpend(a: EvalSpend, b: EvalSpend): EvalSpend {
  return {
    turns: a.turns + b.turns,
    priceUsd: a.priceUsd + b.priceUsd,
    unpricedTurns: a.unpricedTurns + b.unpricedTurns,
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    untokenedTurns: a.untokenedTurns + b.untokenedTurns,
  };
}

/** `$0.42 (3 turns without a price) · 12,345 tokens in, 678 out`, or `no spend reported (scripted)`. */
export function spendText(spend: EvalSpend): string {
  if (spend.turns === 0) return 'nothing spent yet';
  const parts: string[] = [];
  if (spend.unpricedTurns < spend.turns)
    parts.push(`$${spend.priceUsd.toFixed(2)}${spend.unpricedTurns > 0 ? ` + ${spend.unpricedTurns} turn${spend.unpricedTurns === 1 ? '' : 's'} without a price` : ''}`);
  else parts.push(`no price reported (${spend.turns} turn${spend.turns === 1 ? '' : 's'})`);
  if (spend.untokenedTurns < spend.turns)
    parts.push(
      `${spend.inputTokens.toLocaleString('en-US')} tokens in, ${spend.outputTokens.toLocaleString('en-US')} out${spend.untokenedTurns > 0 ? ` (${spend.untokenedTurns} turn${spend.untokenedTurns === 1 ? '' : 's'} without counts)` : ''}`,
    );
  else parts.push('no token counts reported');
  return parts.join(' · ');
}

/** Summaries for the bench's figures (nearest-rank percentiles over the measured runs). */

export interface Summary {
  runs: number;
  median: number;
  p95: number;
  min: number;
  max: number;
}

export function summarize(samples: readonly number[]): Summary {
  if (samples.length === 0) throw new Error('no samples to summarize');
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
  return { runs: sorted.length, median: rank(0.5), p95: rank(0.95), min: sorted[0] as number, max: sorted[sorted.length - 1] as number };
}

export const ms = (x: number) => `${x.toFixed(1)} ms`;

/** `median / p95` of a summary. */
export const mp = (s: Summary) => `${ms(s.median)} / ${ms(s.p95)}`;

export const ratio = (a: Summary, b: Summary) => `${(a.median / b.median).toFixed(2)}×`;

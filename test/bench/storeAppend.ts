import { Store } from '../../host/store/store';

/**
 * Append latency with `existing` events already stored: preloads them in batches (one journal
 * record per batch), then times `samples` single appendEvent calls (each one lock + fsync).
 */
export async function benchStoreAppend(dir: string, existing: number, samples: number, opts: { wasmPath?: string } = {}): Promise<{ p50Ms: number; p99Ms: number; preloadMs: number }> {
  const store = await Store.open(dir, opts.wasmPath ? { wasmPath: opts.wasmPath } : {});
  try {
    const now = () => new Date().toISOString();
    const { session } = store.getOrCreateSession({
      repoRoot: '/bench/repo',
      target: { kind: 'branch', head: 'feature', base: 'main' },
      now: now(),
    });
    const t0 = performance.now();
    const batch = 1000;
    for (let done = 0; done < existing; done += batch) {
      const n = Math.min(batch, existing - done);
      store.appendEvents(
        session.id,
        Array.from({ length: n }, (_, i) => ({ kind: 'bench.preload', payload: { i: done + i, text: 'preloaded event payload' } })),
        now(),
      );
    }
    const preloadMs = performance.now() - t0;
    const latencies: number[] = [];
    for (let i = 0; i < samples; i++) {
      const start = performance.now();
      store.appendEvent(session.id, 'bench.append', { i, text: 'measured event payload' }, now());
      latencies.push(performance.now() - start);
    }
    latencies.sort((a, b) => a - b);
    return { p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99), preloadMs };
  } finally {
    store.close();
  }
}

function percentile(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i] as number;
}

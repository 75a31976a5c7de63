import type { Patchset } from '../../protocol/patchset';

/** About 64 KiB of JSON per chunk: few writes, and the whole body never in one string. */
export const PATCHSET_JSON_CHUNK_CHARS = 1 << 16;

/**
 * A patchset as compact JSON in chunks whose concatenation is exactly `JSON.stringify(patchset)`:
 * the stored body (`patchsets/<id>.json`) and what `rennet capture --json` prints. Files are
 * serialized one at a time, so a 200,000-hunk capture never becomes one 100 MB string. Pure.
 */
export function* patchsetJsonChunks(patchset: Patchset, chunkChars = PATCHSET_JSON_CHUNK_CHARS): Generator<string> {
  let buffer = '{';
  let first = true;
  for (const key of Object.keys(patchset)) {
    const value = (patchset as unknown as Record<string, unknown>)[key];
    if (key === 'files' && Array.isArray(value)) {
      buffer += `${first ? '' : ','}"files":[`;
      for (let i = 0; i < value.length; i++) {
        // As JSON.stringify does: an array hole or undefined entry is null.
        buffer += `${i === 0 ? '' : ','}${JSON.stringify(value[i]) ?? 'null'}`;
        if (buffer.length >= chunkChars) {
          yield buffer;
          buffer = '';
        }
      }
      buffer += ']';
    } else {
      const text = JSON.stringify(value);
      // As JSON.stringify does: a property whose value is undefined (or a function) is left out.
      if (text === undefined) continue;
      buffer += `${first ? '' : ','}${JSON.stringify(key)}:${text}`;
    }
    first = false;
  }
  yield `${buffer}}`;
}

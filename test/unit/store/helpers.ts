import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Patchset } from '../../../protocol';

/** Temp directories for one suite; `cleanup()` in an after hook removes them all. */
export function tempDirs(prefix = 'rennet-store-') {
  const made: string[] = [];
  return {
    make(): string {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
      made.push(dir);
      return dir;
    },
    cleanup(): void {
      for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const WASM_PATH = require.resolve('sql.js/dist/sql-wasm.wasm');

/** A schema-valid patchset with `files` files of `hunksPerFile` hunks each. */
export function makePatchset(tag: string, files = 2, hunksPerFile = 2): Patchset {
  const fileChanges = Array.from({ length: files }, (_, f) => ({
    path: `src/${tag}/file${f}.ts`,
    oldPath: null,
    status: 'modified' as const,
    oldMode: '100644',
    newMode: '100644',
    modeChanged: false,
    oldOid: 'a'.repeat(40),
    newOid: 'b'.repeat(40),
    binary: false,
    submodule: false,
    truncated: false,
    truncation: null,
    similarity: null,
    additions: hunksPerFile,
    deletions: hunksPerFile,
    hunks: Array.from({ length: hunksPerFile }, (_, h) => ({
      id: `h-${tag}-${f}-${h}`,
      header: `@@ -${h * 10 + 1},2 +${h * 10 + 1},2 @@`,
      oldStart: h * 10 + 1,
      oldLines: 2,
      newStart: h * 10 + 1,
      newLines: 2,
      additions: 1,
      deletions: 1,
      lines: [
        { kind: 'context' as const, text: 'unchanged', oldLine: h * 10 + 1, newLine: h * 10 + 1 },
        { kind: 'del' as const, text: `old ${tag}`, oldLine: h * 10 + 2, newLine: null },
        { kind: 'add' as const, text: `new ${tag}`, oldLine: null, newLine: h * 10 + 2 },
      ],
    })),
    regions: [{ side: 'head' as const, startLine: 2, endLine: 2, hunkId: `h-${tag}-${f}-0` }],
  }));
  return {
    id: `ps-${tag.padEnd(16, '0').slice(0, 16)}`,
    base: 'c'.repeat(40),
    head: 'd'.repeat(40),
    headTree: 'e'.repeat(40),
    baseRef: 'main',
    headRef: `feature/${tag}`,
    baseTip: 'c'.repeat(40),
    targetKind: 'branch',
    diffCommand: 'git diff --no-color -U3 base head',
    options: { maxFileBytes: 1048576, maxPatchBytesPerFile: 524288, contextLines: 3 },
    totals: {
      files,
      additions: files * hunksPerFile,
      deletions: files * hunksPerFile,
      hunks: files * hunksPerFile,
      binary: 0,
      submodules: 0,
      truncated: 0,
      uncounted: 0,
    },
    files: fileChanges,
  };
}

export function fileSize(file: string): number {
  return fs.statSync(file).size;
}

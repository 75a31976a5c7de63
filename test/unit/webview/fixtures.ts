import type { FileSummary, PatchsetSummary, SessionSnapshot } from '../../../protocol';

const BASE = 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678';
const HEAD = 'ffeeddccbbaa99887766554433221100aabbccdd';
const TIP = '0123456789abcdef0123456789abcdef01234567';

export function file(overrides: Partial<FileSummary> & Pick<FileSummary, 'path'>): FileSummary {
  return {
    oldPath: null,
    status: 'modified',
    oldMode: '100644',
    newMode: '100644',
    modeChanged: false,
    oldOid: '1111111111111111111111111111111111111111',
    newOid: '2222222222222222222222222222222222222222',
    binary: false,
    submodule: false,
    truncated: false,
    truncation: null,
    similarity: null,
    additions: 3,
    deletions: 1,
    hunkCount: 1,
    ...overrides,
  };
}

export const FILES: FileSummary[] = [
  file({ path: 'src/app.ts', additions: 12, deletions: 4, hunkCount: 2 }),
  file({ path: 'src/new.ts', status: 'added', oldMode: null, oldOid: null, additions: 40, deletions: 0 }),
  file({ path: 'docs/old.md', status: 'deleted', newMode: null, newOid: null, additions: 0, deletions: 9 }),
  file({ path: 'src/renamed.ts', oldPath: 'src/original.ts', status: 'renamed', similarity: 92, additions: 1, deletions: 1 }),
  file({ path: 'bin/run.sh', modeChanged: true, oldMode: '100644', newMode: '100755', additions: 0, deletions: 0, hunkCount: 0 }),
  file({ path: 'assets/logo.png', binary: true, additions: null, deletions: null, hunkCount: 0 }),
  file({
    path: 'vendor/lib',
    submodule: true,
    oldMode: '160000',
    newMode: '160000',
    additions: null,
    deletions: null,
    hunkCount: 0,
  }),
  file({
    path: 'data/huge.json',
    truncated: true,
    truncation: {
      reason: 'file-size',
      limitBytes: 1048576,
      baseBytes: 2000000,
      headBytes: 2100000,
      tailFrom: { base: 1, head: 1 },
    },
    additions: null,
    deletions: null,
    hunkCount: 0,
  }),
  file({
    path: 'src/generated.ts',
    truncated: true,
    truncation: {
      reason: 'patch-size',
      limitBytes: 524288,
      baseBytes: 900000,
      headBytes: 950000,
      tailFrom: { base: 180, head: 201 },
    },
    additions: 150,
    deletions: 20,
    hunkCount: 5,
  }),
];

export function patchset(overrides: Partial<PatchsetSummary> = {}): PatchsetSummary {
  return {
    id: 'ps-0123456789abcdef',
    base: BASE,
    head: HEAD,
    headTree: '3333333333333333333333333333333333333333',
    baseRef: 'main',
    headRef: 'feature/login',
    baseTip: TIP,
    targetKind: 'branch',
    diffCommand: `git diff --find-renames -U3 ${BASE} ${HEAD}`,
    options: { maxFileBytes: 1048576, maxPatchBytesPerFile: 524288, contextLines: 3 },
    totals: {
      files: FILES.length,
      additions: 203,
      deletions: 35,
      hunks: 11,
      binary: 1,
      submodules: 1,
      truncated: 2,
      uncounted: 3,
    },
    files: FILES,
    ...overrides,
  };
}

export function snapshot(overrides: { patchset?: PatchsetSummary | null; sessionId?: string } = {}): SessionSnapshot {
  const ps = overrides.patchset === undefined ? patchset() : overrides.patchset;
  return {
    session: {
      id: overrides.sessionId ?? 'ses-1',
      repoRoot: '/work/repo',
      targetKey: 'branch:feature/login...main',
      target: { kind: 'branch', head: 'feature/login', base: 'main' },
      createdAt: '2025-01-01T00:00:00.000Z',
      updatedAt: '2025-01-01T00:00:00.000Z',
      activePatchsetId: ps ? ps.id : null,
      patchsetIds: ps ? [ps.id] : [],
    },
    patchset: ps,
  };
}

import { parseArgs } from 'node:util';
import type { Patchset, PatchsetSummary } from '../protocol/patchset';
import type { RennetError } from '../protocol/result';
import type { Target } from '../protocol/session';
import { formatPatchsetSummary } from './format';
import { resolveStoreDir } from './storeDir';
import { ReviewService } from './service';
import { Store } from './store';
import { HOST_VERSION } from './version';

/**
 * `rennet` — the same host code in-process, for terminals and CI.
 * Exit codes: 0 success, 1 refused (the message on stderr), 2 usage error.
 */
const USAGE = `Usage:
  rennet review  --repo DIR [--base REF] [--head REF | --working-tree] [--json]
  rennet capture --repo DIR --base REF (--head REF | --working-tree) [--json]
  rennet --version | --help

Options:
  --repo DIR           the repository (a normal or bare repository; bare needs --head)
  --base REF           compare against this ref (review: default origin/HEAD's branch, then main, master)
  --head REF           the commit-ish under review (review: default the current branch)
  --working-tree       review uncommitted and untracked files of the current branch
  --max-file-bytes N   capture files larger than N bytes truncated (default 1048576)
  --store DIR          the data directory (default $RENNET_DATA_DIR or the platform's data directory)
  --json               print JSON (capture: the whole patchset; review: the session snapshot)
`;

class UsageError extends Error {}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      repo: { type: 'string' },
      base: { type: 'string' },
      head: { type: 'string' },
      'working-tree': { type: 'boolean', default: false },
      'max-file-bytes': { type: 'string' },
      store: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
      version: { type: 'boolean', short: 'v', default: false },
    },
  });
  if (values.version) {
    process.stdout.write(`rennet ${HOST_VERSION}\n`);
    return 0;
  }
  const command = positionals[0];
  if (values.help || !command) {
    process.stdout.write(USAGE);
    return values.help ? 0 : 2;
  }
  if (command !== 'review' && command !== 'capture') throw new UsageError(`unknown command "${command}"`);
  if (positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}"`);
  if (!values.repo) throw new UsageError('--repo DIR is required');
  if (values.head && values['working-tree']) throw new UsageError('--head and --working-tree exclude each other');
  let maxFileBytes: number | undefined;
  if (values['max-file-bytes'] !== undefined) {
    maxFileBytes = Number(values['max-file-bytes']);
    if (!Number.isInteger(maxFileBytes) || maxFileBytes < 1) throw new UsageError('--max-file-bytes must be a positive integer');
  }

  const storeArgs = values.store ? ['--store', values.store] : [];
  const store = await Store.open(resolveStoreDir(storeArgs, process.env));
  try {
    const service = new ReviewService({ store });
    if (command === 'capture') {
      if (!values.base) throw new UsageError('capture needs --base REF');
      if (!values.head && !values['working-tree']) throw new UsageError('capture needs --head REF or --working-tree');
      const target: Target = values['working-tree']
        ? { kind: 'working-tree', base: values.base }
        : { kind: 'branch', head: values.head as string, base: values.base };
      const result = await service.capture(values.repo, target, maxFileBytes === undefined ? undefined : { maxFileBytes });
      if (!result.ok) return refuse(result.error);
      writeOut(values.json ? JSON.stringify(result.value.patchset, null, 2) : captureText(result.value.patchset, result.value.created));
      return 0;
    }

    const branches = await service.listBranches(values.repo);
    if (!branches.ok) return refuse(branches.error);
    const base = values.base ?? branches.value.defaultBase;
    if (!base) return refuse({ code: 'unknown-ref', message: 'no default base found (no origin/HEAD, main or master); pass --base REF' });
    let target: Target;
    if (values['working-tree']) {
      target = { kind: 'working-tree', base };
    } else {
      const head = values.head ?? branches.value.current;
      if (!head) return refuse({ code: 'detached-head', message: 'HEAD is detached; pass --head REF to say what to review' });
      target = { kind: 'branch', head, base };
    }
    const opened = await service.openReview({ repo: values.repo, target, ...(maxFileBytes === undefined ? {} : { maxFileBytes }) });
    if (!opened.ok) return refuse(opened.error);
    const { snapshot, reattached, captured } = opened.value;
    if (values.json) {
      writeOut(JSON.stringify(opened.value, null, 2));
      return 0;
    }
    const lines = [
      `Session ${snapshot.session.id} (${reattached ? 'reattached' : 'new'}) · ${snapshot.session.repoRoot}`,
      snapshot.patchset ? formatPatchsetSummary(snapshot.patchset) : 'No patchset captured.',
      captured ? '' : '(this capture was already in the store; nothing new was written)',
    ];
    writeOut(lines.filter((l) => l.length > 0).join('\n'));
    return 0;
  } finally {
    store.close();
  }
}

function captureText(patchset: Patchset, created: boolean): string {
  const summary: PatchsetSummary = { ...patchset, files: patchset.files.map(({ hunks, regions: _r, ...f }) => ({ ...f, hunkCount: hunks.length })) };
  return `${formatPatchsetSummary(summary)}\n${created ? 'stored' : 'already stored; nothing new written'}`;
}

function writeOut(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

function refuse(error: RennetError): number {
  process.stderr.write(`rennet: ${error.message}\n`);
  return 1;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`rennet: ${(error as Error).message}\n\n${USAGE}`);
      process.exitCode = 2;
      return;
    }
    process.stderr.write(`rennet: ${(error as Error).stack ?? String(error)}\n`);
    process.exitCode = 1;
  },
);

import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { captureCommand } from './cliCapture';
import { resolveStoreDir } from './storeDir';
import { HOST_VERSION } from './version';

/**
 * `rennet`'s entry (dist/cli.js). `--version` and a well-formed `capture` run from here and load
 * only what they need; anything else, every usage error included, loads the whole CLI (cli.ts,
 * built as dist/cli-full.js), which reads the same argv and says what is wrong. Start-up is most
 * of a short command's time, and the whole CLI carries the forge clients, the harnesses and the
 * MCP server.
 */
const FAST_OPTIONS = {
  repo: { type: 'string' },
  base: { type: 'string' },
  head: { type: 'string' },
  'working-tree': { type: 'boolean', default: false },
  'max-file-bytes': { type: 'string' },
  store: { type: 'string' },
  json: { type: 'boolean', default: false },
  version: { type: 'boolean', short: 'v', default: false },
} as const;

/** The exit code of a command run here, or null: the whole CLI decides. */
async function runFast(argv: string[]): Promise<number | null> {
  if (argv[0] === 'eval') return null;
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; options: typeof FAST_OPTIONS; allowPositionals: true; strict: true }>>;
  try {
    parsed = parseArgs({ args: argv, options: FAST_OPTIONS, allowPositionals: true, strict: true });
  } catch {
    return null; // an option only the whole CLI knows, or a malformed one: its message
  }
  const { values, positionals } = parsed;
  if (values.version) {
    process.stdout.write(`rennet ${HOST_VERSION}\n`);
    return 0;
  }
  if (positionals.length !== 1 || positionals[0] !== 'capture') return null;
  const { repo, base, head } = values;
  const workingTree = values['working-tree'];
  if (!repo || !base || (head && workingTree) || (!head && !workingTree)) return null;
  let maxFileBytes: number | undefined;
  if (values['max-file-bytes'] !== undefined) {
    maxFileBytes = Number(values['max-file-bytes']);
    if (!Number.isInteger(maxFileBytes) || maxFileBytes < 1) return null;
  }
  // A capture runs a handful of SQLite statements: sql.js's WebAssembly stays on V8's baseline
  // compiler, instead of an optimizing recompile of the whole engine in the background (about
  // half a second of CPU, and nearly all of opening the store). Before the store loads it.
  setFlagsFromString('--liftoff-only');
  return captureCommand(
    {
      repo,
      target: workingTree ? { kind: 'working-tree', base } : { kind: 'branch', head: head as string, base },
      maxFileBytes,
      json: values.json,
      storeDir: resolveStoreDir(values.store ? ['--store', values.store] : [], process.env),
    },
    { stdout: process.stdout, stderr: (text) => process.stderr.write(text) },
  );
}

runFast(process.argv.slice(2)).then(
  async (code) => {
    if (code !== null) {
      process.exitCode = code;
      return;
    }
    // The whole CLI runs its main on load (esbuild maps this import to ./cli-full.js).
    await import('./cli');
  },
  (error: unknown) => {
    process.stderr.write(`rennet: ${(error as Error).stack ?? String(error)}\n`);
    process.exitCode = 1;
  },
);

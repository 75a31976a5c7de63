import * as assert from 'node:assert/strict';
import { join } from 'node:path';
import ts from 'typescript';

/**
 * Each runtime's TypeScript project (its folder's tsconfig.json) declares only the globals that
 * runtime has: a probe file placed in the folder (in memory: nothing is written) is compiled with
 * that project's options, and every global the runtime lacks must be "Cannot find name".
 */
const root = join(__dirname, '..', '..');

/** One line each; a global is missing when its line has a diagnostic. */
const PROBES = {
  dom: 'document.title',
  window: 'window.location',
  process: 'process.env',
  buffer: "Buffer.from('')",
} as const;
type Probe = keyof typeof PROBES;

/** The probes a project's options leave undeclared. */
function missingGlobals(project: string): Probe[] {
  const dir = join(root, project);
  const config = ts.readConfigFile(join(dir, 'tsconfig.json'), ts.sys.readFile);
  const options = ts.parseJsonConfigFileContent(config.config, ts.sys, dir).options;
  const names = Object.keys(PROBES) as Probe[];
  const file = join(dir, project === '.' ? 'test' : '', '__runtime_probe.ts');
  const text = names.map((name) => `export const probe${name} = ${PROBES[name]};\n`).join('');
  const host = ts.createCompilerHost(options, true);
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => name === file || fileExists(name);
  host.getSourceFile = (name, language, onError, fresh) => (name === file ? ts.createSourceFile(name, text, language, true) : getSourceFile(name, language, onError, fresh));
  const program = ts.createProgram([file], options, host);
  const source = program.getSourceFile(file);
  assert.ok(source, `${project}: the probe was not compiled`);
  const lines = new Set(program.getSemanticDiagnostics(source).map((d) => source.getLineAndCharacterOfPosition(d.start ?? 0).line));
  return names.filter((_, line) => lines.has(line));
}

describe('tsconfig: each runtime sees only its own globals', function () {
  this.timeout(120_000);

  const cases: Array<[project: string, missing: Probe[]]> = [
    ['protocol', ['dom', 'window', 'process', 'buffer']],
    ['prompts', ['dom', 'window']],
    ['host', ['dom', 'window']],
    ['extension', ['dom', 'window']],
    ['webview', ['process', 'buffer']],
    ['.', []],
  ];
  for (const [project, missing] of cases) {
    it(`${project === '.' ? 'the tests (tsconfig.json)' : `${project}/`}: ${missing.length > 0 ? `no ${missing.join(', ')}` : 'every global'}`, () => {
      assert.deepEqual(missingGlobals(project), missing);
    });
  }
});

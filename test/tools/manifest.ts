/**
 * package.json's generated parts: every harness enum in the settings contribution (the default and
 * each per-lens override) is written from protocol's HarnessName and HARNESS_DESCRIPTIONS, so the
 * list lives in one place. `npm run manifest` rewrites package.json; the unit test
 * test/unit/protocol/manifest.test.ts fails while the two differ.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { LENSES } from '../../protocol/board';
import { HARNESS_DESCRIPTIONS, HarnessName } from '../../protocol/review';

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

export const PACKAGE_JSON = fileURLToPath(new URL('../../package.json', import.meta.url));

/** The settings that pick a harness: the default, then one per lens. */
export function harnessSettingPaths(): string[][] {
  return [['rennet.harness.default'], ...LENSES.map((lens) => ['rennet.harness.lenses', 'properties', lens])];
}

function settingAt(pkg: JsonObject, path: readonly string[]): JsonObject {
  let node = ((pkg.contributes as JsonObject).configuration as JsonObject).properties as JsonObject;
  for (const key of path) {
    const next = node[key];
    if (!next || typeof next !== 'object' || Array.isArray(next)) throw new Error(`package.json has no setting at ${path.join(' › ')}`);
    node = next;
  }
  return node;
}

/** package.json with every harness enum written from protocol (the rest of each setting kept). */
export function withGeneratedHarnessEnums(pkg: JsonObject): JsonObject {
  const copy = JSON.parse(JSON.stringify(pkg)) as JsonObject;
  for (const path of harnessSettingPaths()) {
    const setting = settingAt(copy, path);
    setting.enum = [...HarnessName.options];
    setting.enumDescriptions = HarnessName.options.map((name) => HARNESS_DESCRIPTIONS[name]);
  }
  return copy;
}

export function renderPackageJson(pkg: JsonObject): string {
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const current = readFileSync(PACKAGE_JSON, 'utf8');
  const next = renderPackageJson(withGeneratedHarnessEnums(JSON.parse(current) as JsonObject));
  if (next === current) process.stdout.write('package.json: harness enums already match protocol/\n');
  else {
    writeFileSync(PACKAGE_JSON, next);
    process.stdout.write('package.json: harness enums rewritten from protocol/\n');
  }
}

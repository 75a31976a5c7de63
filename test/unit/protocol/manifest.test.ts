import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { HarnessName } from '../../../protocol/review';
import { harnessSettingPaths, PACKAGE_JSON, renderPackageJson, withGeneratedHarnessEnums } from '../../tools/manifest';

describe('package.json generated from protocol', () => {
  const text = readFileSync(PACKAGE_JSON, 'utf8');
  const pkg = JSON.parse(text);

  it('every harness setting lists exactly protocol’s harness names with their descriptions (run `npm run manifest` when this fails)', () => {
    assert.equal(text, renderPackageJson(withGeneratedHarnessEnums(pkg)));
  });

  it('covers the default and one override per lens, and a changed list would be caught', () => {
    assert.equal(harnessSettingPaths().length, 6);
    const drifted = JSON.parse(text);
    const setting = drifted.contributes.configuration.properties['rennet.harness.lenses'].properties.noise;
    setting.enum = setting.enum.filter((name: string) => name !== 'codex');
    assert.notEqual(renderPackageJson(drifted), renderPackageJson(withGeneratedHarnessEnums(drifted)));
    assert.deepEqual(withGeneratedHarnessEnums(drifted).contributes, withGeneratedHarnessEnums(pkg).contributes);
    assert.deepEqual(HarnessName.options.length, setting.enum.length + 1);
  });
});

import * as assert from 'node:assert/strict';
import { escapeControls, escapeInvisible, hasControls } from '../../../protocol/text';
import { markdownPlain } from '../../../webview/board/markdown';

describe('protocol/text: invisible and reordering characters made visible', () => {
  const CORPUS: ReadonlyArray<[string, string]> = [
    ['invoice\u202Etxt.exe', 'invoice\\u202Etxt.exe'],
    ['evil\nname.txt', 'evil\\nname.txt'],
    ['tab\there', 'tab\\there'],
    ['a\u200Bb\u200Dc\u2060d\uFEFFe', 'a\\u200Bb\\u200Dc\\u2060d\\uFEFFe'],
    ['iso\u2066late\u2069', 'iso\\u2066late\\u2069'],
    ['c1\u0085next\u009b', 'c1\\u0085next\\u009B'],
    ['nul\u0000del\u007f', 'nul\\u0000del\\u007F'],
    ['back\\slash\u202E', 'back\\\\slash\\u202E'],
  ];

  it('escapeControls writes each as an escape and reads back unambiguously', () => {
    for (const [raw, shown] of CORPUS) {
      assert.equal(escapeControls(raw), shown, JSON.stringify(raw));
      assert.equal(hasControls(shown), false, `${JSON.stringify(shown)} is clean`);
      assert.equal(JSON.parse(`"${shown.replace(/"/g, '\\"')}"`), raw, 'the escaped form is the JSON spelling of the raw text');
    }
  });

  it('ordinary text, unicode letters and a lone backslash are left as they are', () => {
    for (const text of ['src/app.ts', 'docs/ünïcödé 文件.md', 'C:\\windows\\path', 'emoji 🎉 and é']) {
      assert.equal(escapeControls(text), text);
      assert.equal(escapeInvisible(text), text);
      assert.equal(hasControls(text), false);
    }
  });

  it('escapeInvisible keeps tabs and line breaks (code and prose keep their layout)', () => {
    assert.equal(escapeInvisible('if (a) {\n\treturn; // \u202E } \u2066 {\r\n'), 'if (a) {\n\treturn; // \\u202E } \\u2066 {\r\n');
  });

  it('board text in the panel shows a bidi override instead of obeying it', () => {
    assert.equal(markdownPlain('Pay **invoice\u202Etxt.exe** now'), 'Pay invoice\\u202Etxt.exe now');
  });
});

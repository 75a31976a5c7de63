import * as assert from 'node:assert/strict';
import { elementField, elementStrings, type BoardElement } from '../../../protocol/board';

// Only the fields these reads touch; the reader never validates, so a partial element is enough.
const codeRef = { id: 'e1', kind: 'code_ref', parent: null, path: 'src/app.ts', side: 'head', start_line: 7, end_line: 9 } as unknown as BoardElement;
const finding = { id: 'e2', kind: 'finding', parent: null, title: 'Leak', anchor: ['e1', 3, 'e4'], evidence: 'one line' } as unknown as BoardElement;

describe('protocol/board: elementField and elementStrings, reading an element by field name', () => {
  it('a literal name reads as the type the schema gives it; a field the kind lacks is undefined', () => {
    const start: number | undefined = elementField(codeRef, 'start_line');
    const path: string | undefined = elementField(codeRef, 'path');
    assert.equal(start, 7);
    assert.equal(path, 'src/app.ts');
    assert.equal(elementField(finding, 'path'), undefined);
  });

  it('a name known only at run time reads unknown', () => {
    const name: string = 'title';
    assert.equal(elementField(finding, name), 'Leak');
  });

  it('elementStrings gives a string field as one item, a list without its non-strings, anything else as none', () => {
    assert.deepEqual(elementStrings(finding, 'evidence'), ['one line']);
    assert.deepEqual(elementStrings(finding, 'anchor'), ['e1', 'e4']);
    assert.deepEqual(elementStrings(codeRef, 'start_line'), []);
    assert.deepEqual(elementStrings(codeRef, 'missing'), []);
  });
});

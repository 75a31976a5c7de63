/**
 * The panel's message reader (webview/reader.ts): a generation's elements and excerpts equal to
 * the last accepted generation's are not checked again, and the reader decides every message
 * exactly as the contract (ToWebview, whole) does.
 */
import * as assert from 'node:assert/strict';
import { LENSES, type BoardElement, type GenerationSnapshot, type ToWebview } from '../../../protocol';
import { createMessageReader, parseToWebview, splitHolds, type MessageReader, type Parsed } from '../../../webview/reader';
import { generation, lane } from './boardFixtures';
import { snapshot } from './fixtures';
import { hostileBoard } from './hostileFixtures';

const copy = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
type Loose = Record<string, unknown>;

const message = (snapshot: unknown): Loose => ({ type: 'rennet/panel/generation', snapshot });

/** A JSON copy of generation message `m` with `edit` applied to its snapshot. */
function edited(m: Loose, edit: (snapshot: Loose & { lanes: Array<Loose & { board: (Loose & { elements: Loose[] }) | null }>; excerpts: Record<string, Loose> }) => void): Loose {
  const next = copy(m);
  edit(next['snapshot'] as Parameters<typeof edit>[0]);
  return next;
}

const flaggedIndex = LENSES.indexOf('flagged');

function reasons(parsed: Parsed<ToWebview>): string[] {
  return parsed.ok ? [] : parsed.reason.split('; ').sort();
}

/** Reads `data` and checks the answer is the contract's own. */
function readAsContract(reader: MessageReader, data: unknown, label: string): Parsed<ToWebview> {
  const read = reader.read(data);
  const whole = parseToWebview(data);
  assert.equal(read.ok, whole.ok, `${label}: accepted by one and not the other (${read.ok ? '' : read.reason}${whole.ok ? '' : whole.reason})`);
  if (read.ok && whole.ok) assert.deepEqual(read.value, whole.value, `${label}: same value`);
  else assert.deepEqual(reasons(read), reasons(whole), `${label}: same reasons`);
  return read;
}

function elementsOf(parsed: Parsed<ToWebview>): BoardElement[][] {
  assert.ok(parsed.ok && parsed.value.type === 'rennet/panel/generation' && parsed.value.snapshot);
  return parsed.value.snapshot.lanes.map((l) => l.board?.elements ?? []);
}

function excerptsOf(parsed: Parsed<ToWebview>): GenerationSnapshot['excerpts'] {
  assert.ok(parsed.ok && parsed.value.type === 'rennet/panel/generation' && parsed.value.snapshot);
  return parsed.value.snapshot.excerpts;
}

describe('webview/reader', () => {
  const base = message(generation());

  it('splits the check only while the contract checks elements and excerpts with their own schemas alone', () => {
    assert.equal(splitHolds(), true, 'protocol/webview.ts changed how a generation is checked: revisit webview/reader.ts');
  });

  it('decides every message as ToWebview does, kept elements or not', () => {
    const reader = createMessageReader();
    const cases: Array<[string, unknown]> = [
      ['a generation', base],
      ['the same again', copy(base)],
      ['one finding retitled', edited(base, (s) => void ((s.lanes[flaggedIndex]?.board?.elements[3] as Loose)['title'] = 'Retitled'))],
      ['an element of an unknown kind', edited(base, (s) => void ((s.lanes[flaggedIndex]?.board?.elements[3] as Loose)['kind'] = 'poem'))],
      ['a finding with a bad severity', edited(base, (s) => void ((s.lanes[flaggedIndex]?.board?.elements[3] as Loose)['severity'] = 'huge'))],
      ['an element with a field the contract does not name (dropped)', edited(base, (s) => void ((s.lanes[flaggedIndex]?.board?.elements[1] as Loose)['extra'] = 1))],
      ['an element that is not an object', edited(base, (s) => void ((s.lanes[flaggedIndex]?.board?.elements as unknown[])[0] = 'f1'))],
      ['an excerpt starting at line 0', edited(base, (s) => void ((Object.values(s.excerpts)[0] as Loose)['startLine'] = 0))],
      ['an excerpt that is a list', edited(base, (s) => void (s.excerpts[Object.keys(s.excerpts)[0] as string] = [] as unknown as Loose))],
      [
        'an excerpt named __proto__',
        {
          ...copy(base),
          snapshot: { ...(copy(base)['snapshot'] as Loose), excerpts: JSON.parse(`{"__proto__": ${JSON.stringify(Object.values((base['snapshot'] as Loose)['excerpts'] as Loose)[0])}}`) as unknown },
        },
      ],
      ['a bad generation id around kept elements', edited(base, (s) => void (s['generationId'] = 7))],
      ['a lane of an unknown lens around kept elements', edited(base, (s) => void ((s.lanes[0] as Loose)['lens'] = 'vibes'))],
      ['a board whose elements are not a list', edited(base, (s) => void ((s.lanes[flaggedIndex]?.board as Loose)['elements'] = { 0: 'x' }))],
      ['a board of the wrong shape', edited(base, (s) => void ((s.lanes[flaggedIndex] as Loose)['board'] = 'none'))],
      ['lanes that are not a list', edited(base, (s) => void (s['lanes'] = {} as never))],
      ['excerpts that are not an object', edited(base, (s) => void (s['excerpts'] = [] as never))],
      [
        'a Date where an element should be',
        (() => {
          const m = copy(base);
          ((m['snapshot'] as { lanes: Array<{ board: { elements: unknown[] } }> }).lanes[flaggedIndex] as { board: { elements: unknown[] } }).board.elements[2] = new Date(0);
          return m;
        })(),
      ],
      [
        'a bad element and a bad envelope at once',
        edited(base, (s) => {
          s['status'] = 'gone';
          (s.lanes[flaggedIndex]?.board?.elements[3] as Loose)['severity'] = 'huge';
        }),
      ],
      ['no generation', message(null)],
      ['hostile boards', message(generation({ lanes: LENSES.map((lens) => lane(lens, 'settled', { board: hostileBoard(lens, false) })) }))],
      [
        'hostile boards again, one element changed',
        edited(message(generation({ lanes: LENSES.map((lens) => lane(lens, 'settled', { board: hostileBoard(lens, false) })) })), (s) => void ((s.lanes[0]?.board?.elements[0] as Loose)['seq'] = 40)),
      ],
      ['a session snapshot', { type: 'rennet/panel/snapshot', snapshot: snapshot() }],
      ['something else', { type: 'rennet/panel/generation' }],
      ['the first generation again', copy(base)],
    ];
    for (const [label, data] of cases) readAsContract(reader, data, label);
  });

  it('hands back the checked objects of an unchanged generation, and new ones only for what changed', () => {
    const reader = createMessageReader();
    const first = readAsContract(reader, base, 'first');
    const again = readAsContract(reader, copy(base), 'again');
    // zod builds a new object for every object it checks: the same object means it was not checked again.
    elementsOf(again).forEach((pool, i) => pool.forEach((element, j) => assert.equal(element, elementsOf(first)[i]?.[j], `${element.id} was not checked again`)));
    for (const [key, excerpt] of Object.entries(excerptsOf(again))) assert.equal(excerpt, excerptsOf(first)[key]);

    const retitled = readAsContract(
      reader,
      edited(base, (s) => void ((s.lanes[flaggedIndex]?.board?.elements[3] as Loose)['title'] = 'Retitled')),
      'retitled',
    );
    elementsOf(retitled).forEach((pool, i) =>
      pool.forEach((element, j) => {
        if (i === flaggedIndex && j === 3) {
          assert.notEqual(element, elementsOf(first)[i]?.[j]);
          assert.equal((element as { title?: string }).title, 'Retitled');
        } else assert.equal(element, elementsOf(first)[i]?.[j], `${element.id} was not checked again`);
      }),
    );
  });

  it('keeps nothing from a message it refused', () => {
    const reader = createMessageReader();
    const first = readAsContract(reader, base, 'first');
    const refused = readAsContract(
      reader,
      edited(base, (s) => void ((s.lanes[flaggedIndex]?.board?.elements[3] as Loose)['severity'] = 'huge')),
      'refused',
    );
    assert.equal(refused.ok, false);
    const after = readAsContract(reader, copy(base), 'after');
    elementsOf(after).forEach((pool, i) => pool.forEach((element, j) => assert.equal(element, elementsOf(first)[i]?.[j])));
  });
});

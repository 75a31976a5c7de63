import assert from 'node:assert/strict';
import { z } from 'zod';
import { HOST_DERIVED_MEMBER_KINDS, KIND_INPUTS, LENSES, REFERENCE_FIELDS, lensAuthoredKinds, seatAbsence, writesWholeBoard } from '../../../protocol/board';
import { buildBoardTools, flatInputViolations, idFieldsOf, renderInputSchema, toolListing } from '../../../host/board/tools';

const HOST_OWNED = ['author', 'status', 'concurrence', 'accord', 'patchset_id', 'hunk_ids', 'verdict', 'judge', 'delta', 'measure', 'prose_register', 'seq'];

/** Every property name anywhere in a JSON Schema (the inputs are flat, but look everywhere). */
function propertyNames(schema: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(schema)) for (const item of schema) propertyNames(item, out);
  else if (schema && typeof schema === 'object') {
    const node = schema as Record<string, unknown>;
    if (node.properties && typeof node.properties === 'object') for (const key of Object.keys(node.properties)) out.add(key);
    for (const value of Object.values(node)) propertyNames(value, out);
  }
  return out;
}

describe('board tools: derived from the tables', () => {
  it('every lens gets add_/update_ per authored kind, the shared verbs, and nothing per-lens', () => {
    for (const lens of LENSES) {
      const names = buildBoardTools(lens).map((t) => t.name);
      const expected = ['set_document', 'cite', 'remove_element', 'finish'];
      for (const kind of lensAuthoredKinds(lens)) {
        if (!HOST_DERIVED_MEMBER_KINDS.includes(kind)) expected.push(`add_${kind}`);
        expected.push(`update_${kind}`);
      }
      if (seatAbsence(lens)) expected.push('settle_absent');
      if (writesWholeBoard(lens)) expected.push('write_board');
      assert.deepEqual([...names].sort(), expected.sort(), lens);
      assert.equal(new Set(names).size, names.length, `${lens}: tool names are unique`);
    }
  });

  it('Sequence has no settle_absent; Noise has write_board and no add_noise_member; only Noise writes whole boards', () => {
    const sequence = buildBoardTools('sequence').map((t) => t.name);
    assert.ok(!sequence.includes('settle_absent'));
    assert.ok(sequence.includes('add_order_step'));
    const noise = buildBoardTools('noise').map((t) => t.name);
    assert.ok(noise.includes('write_board'));
    assert.ok(!noise.includes('add_noise_member'));
    assert.ok(noise.includes('update_noise_member'), 'the Noise seat parents host-placed members with update');
    assert.ok(!noise.includes('settle_absent'), 'the host settles a Noise absence, never the seat');
    for (const lens of LENSES.filter((l) => l !== 'noise')) assert.ok(!buildBoardTools(lens).some((t) => t.name === 'write_board'), lens);
  });

  it('settle_absent states the fixed reason and has no field to name another', () => {
    for (const lens of LENSES) {
      const row = seatAbsence(lens);
      const tool = buildBoardTools(lens).find((t) => t.name === 'settle_absent');
      if (!row) {
        assert.equal(tool, undefined, lens);
        continue;
      }
      assert.ok(tool, lens);
      assert.ok(tool.description.includes(row.meaning), `${lens}: the description carries the row's meaning`);
      assert.deepEqual(Object.keys(tool.inputSchema.properties ?? {}), []);
      assert.deepEqual(tool.toCall({}), { verb: 'settle_absent' });
    }
  });

  it('no tool input mentions a host-owned field', () => {
    for (const lens of LENSES) {
      for (const tool of buildBoardTools(lens)) {
        const names = propertyNames(tool.inputSchema);
        for (const owned of HOST_OWNED) assert.ok(!names.has(owned), `${lens}/${tool.name} exposes ${owned}`);
        assert.ok(!names.has('kind') && !names.has('parent'), `${lens}/${tool.name}`);
      }
    }
  });

  it('add_ inputs are KIND_INPUTS plus parent_id (and the finding input-only fields); update_ makes every field optional but id', () => {
    const flagged = buildBoardTools('flagged');
    const addFinding = flagged.find((t) => t.name === 'add_finding')!;
    const props = Object.keys(addFinding.inputSchema.properties ?? {});
    for (const key of Object.keys(KIND_INPUTS.finding.shape)) assert.ok(props.includes(key), key);
    assert.ok(props.includes('origin') && props.includes('agreement') && props.includes('parent_id'));
    assert.ok(!(addFinding.inputSchema.required ?? []).includes('parent_id'));
    const parent = (addFinding.inputSchema.properties as Record<string, { description?: string }>).parent_id!;
    assert.match(parent.description ?? '', /section/);
    const update = flagged.find((t) => t.name === 'update_finding')!;
    assert.deepEqual(update.inputSchema.required, ['id']);
    assert.deepEqual(update.toCall({ id: 'e1', title: 'x' }), { verb: 'update', kind: 'finding', input: { id: 'e1', title: 'x' } });
    assert.deepEqual(addFinding.toCall({ title: 't' }), { verb: 'add', kind: 'finding', input: { title: 't' } });
    const member = buildBoardTools('noise').find((t) => t.name === 'update_noise_member')!;
    assert.deepEqual(Object.keys(member.inputSchema.properties ?? {}).sort(), ['id', 'parent_id']);
  });

  it('cite takes path, side, start_line, end_line and label, and becomes a cite verb', () => {
    const cite = buildBoardTools('sequence').find((t) => t.name === 'cite')!;
    assert.deepEqual(Object.keys(cite.inputSchema.properties ?? {}), ['path', 'side', 'start_line', 'end_line', 'label']);
    assert.deepEqual(cite.inputSchema.required, ['path', 'side', 'start_line', 'end_line']);
    const input = { path: 'a.ts', side: 'head', start_line: 1, end_line: 2 };
    assert.deepEqual(cite.toCall(input), { verb: 'cite', input });
    assert.match(cite.description, /code_ref id/);
  });

  it('reference fields are named in the descriptions and known to write_board', () => {
    const step = buildBoardTools('sequence').find((t) => t.name === 'add_order_step')!;
    assert.match(step.description, /span takes an id of code_ref/);
    assert.deepEqual(idFieldsOf(step).sort(), ['parent_id', 'span']);
    for (const lens of LENSES) {
      for (const tool of buildBoardTools(lens)) {
        for (const field of Object.keys((tool.kind && REFERENCE_FIELDS[tool.kind]) ?? {})) assert.ok(idFieldsOf(tool).includes(field), `${tool.name}.${field}`);
      }
    }
  });

  it('the served listing is the rendering of each zod input (no $schema line, no safe-integer noise)', () => {
    for (const lens of LENSES) {
      const tools = buildBoardTools(lens);
      for (const entry of toolListing(tools)) {
        const tool = tools.find((t) => t.name === entry.name)!;
        assert.deepEqual(entry.inputSchema, renderInputSchema(tool.zod));
        assert.equal(entry.inputSchema.type, 'object');
        assert.ok(!('$schema' in entry.inputSchema));
        assert.ok(!JSON.stringify(entry.inputSchema).includes(String(Number.MAX_SAFE_INTEGER)));
        assert.ok(entry.description.length > 20 && entry.description.length < 600, `${entry.name}: a short description`);
      }
    }
  });
});

describe('flatInputViolations', () => {
  it('is empty over every lens', () => {
    for (const lens of LENSES) assert.deepEqual(flatInputViolations(buildBoardTools(lens)), [], lens);
  });

  it('catches a nested object, an array of objects, a union at any depth, and a non-object top level', () => {
    const bad = [
      { name: 'nested', zod: z.object({ ok: z.string(), where: z.object({ path: z.string() }) }) },
      { name: 'rows', zod: z.object({ rows: z.array(z.object({ a: z.string() })) }) },
      { name: 'union', zod: z.object({ value: z.union([z.string(), z.object({ a: z.string() })]) }) },
      { name: 'deep_union', zod: z.object({ list: z.array(z.union([z.literal('a'), z.number()])) }) },
      { name: 'top', zod: z.union([z.object({ a: z.string() }), z.object({ b: z.string() })]) as unknown as z.ZodObject },
    ];
    const violations = flatInputViolations(bad);
    const about = (tool: string) => violations.filter((v) => v.startsWith(`${tool}:`));
    assert.ok(
      about('nested').some((v) => /field where is a nested object/.test(v)),
      violations.join('\n'),
    );
    assert.ok(!about('nested').some((v) => /field ok/.test(v)), 'a scalar field is not reported');
    assert.ok(
      about('rows').some((v) => /field rows\[\] is an array of objects/.test(v)),
      violations.join('\n'),
    );
    assert.ok(
      about('union').some((v) => /field value is a union \(anyOf\)/.test(v)),
      violations.join('\n'),
    );
    assert.ok(
      about('deep_union').some((v) => /field list\[\] is a union/.test(v)),
      violations.join('\n'),
    );
    assert.ok(
      about('top').some((v) => /no top-level "type": "object"/.test(v)),
      violations.join('\n'),
    );
  });
});

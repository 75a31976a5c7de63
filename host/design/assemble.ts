import type { Patchset } from '../../protocol/patchset';
import { buildCitationIndex } from '../board/citations';
import type { WriterContext } from '../board/state';
import { detectSpec, type ReadHeadFile, type Selection } from './detect';
import { SpecParseError, type DesignAssembly, type SpecDocument } from './model';
import { SourceLoader } from './readers/common';
import { readBmad } from './readers/bmad';
import { readGrill } from './readers/grill';
import { readKiro } from './readers/kiro';
import { readOpenSpec } from './readers/openspec';
import { readSuperpowers } from './readers/superpowers';
import { writeBoard } from './render';

export type { DesignAssembly, SpecFormat } from './model';
export { ASSEMBLER_RULES, LABELS, SPEC_FORMATS, FORMAT_NAMES } from './model';
export { detectSpec, type Selection } from './detect';

/** The author stamped on every element the assembler writes. */
export const ASSEMBLER_AUTHOR = 'assembler';

/**
 * The Design board of a branch that carries a specification in a format Rennet reads, built on
 * the host with no model turn: the first format the patchset touches (OpenSpec, Kiro, BMAD,
 * Superpowers, grill-with-docs), one specification, written through applyVerb in the
 * transcribed register and finished. `none` when the branch carries no such specification;
 * `fallback` (the rule that refused, and the located sources) when it cannot be settled here,
 * so the seat renders the same specification from design-sources.md.
 *
 * `readHeadFile` reads a file at the captured head, or null when it has none there. The same
 * patchset and reader always assemble the same board.
 */
export async function assembleDesignBoard(patchset: Patchset, readHeadFile: ReadHeadFile): Promise<DesignAssembly> {
  const selection = await detectSpec(patchset, readHeadFile);
  if (!selection) return { kind: 'none' };
  const loader = new SourceLoader(readHeadFile, selectionTouched(selection));
  let doc: SpecDocument;
  try {
    doc = await readSelection(selection, loader);
  } catch (error) {
    if (error instanceof SpecParseError) {
      return { kind: 'fallback', format: selection.format, sources: sourcesOf(selection, loader), rule: error.rule, reason: error.message };
    }
    throw error;
  }
  if (doc.files.length === 0) {
    return {
      kind: 'fallback',
      format: selection.format,
      sources: sourcesOf(selection, loader),
      rule: 'spec-empty',
      reason: 'no file of the selected specification could be read at the reviewed head',
    };
  }
  const ctx: WriterContext = { author: ASSEMBLER_AUTHOR, citations: buildCitationIndex(patchset) };
  const written = writeBoard(doc, patchset.id, ctx);
  if (!written.ok) return { kind: 'fallback', format: doc.format, sources: doc.sources, rule: written.rule, reason: written.reason };
  return { kind: 'board', format: doc.format, sources: doc.sources, state: written.state };
}

function readSelection(selection: Selection, loader: SourceLoader): Promise<SpecDocument> {
  switch (selection.format) {
    case 'openspec':
      return readOpenSpec(selection, loader);
    case 'kiro':
      return readKiro(selection, loader);
    case 'bmad':
      return readBmad(selection, loader);
    case 'superpowers':
      return readSuperpowers(selection, loader);
    case 'grill-with-docs':
      return readGrill(selection, loader);
  }
}

/** Paths the change touches inside the selection: these must read. */
function selectionTouched(selection: Selection): string[] {
  if (selection.format === 'superpowers') return [selection.plan, selection.design].filter((p): p is string => p !== null && selection.touched.includes(p));
  return selection.touched;
}

/** What the host located for a fallback: what was read, then the selection's other touched Markdown. */
function sourcesOf(selection: Selection, loader: SourceLoader): string[] {
  const out = [...loader.located];
  const more = selection.format === 'superpowers' ? [selection.design, selection.plan].filter((p): p is string => p !== null) : selection.touched;
  for (const path of more) if (/\.(md|markdown)$/i.test(path) && !out.includes(path)) out.push(path);
  return out;
}

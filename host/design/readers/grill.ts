import type { Selection } from '../detect';
import { contextKind } from '../detect';
import { leadingTitle, lineSpan, textOf, titleOf, type MdFile, type MdNode } from '../markdown';
import { LABELS, type Block, type CodeSpan, type SpecDocument } from '../model';
import { contentOf, decisionData, fileSection, readFile, renderNode, section, topItemsOf, type FileRenderer } from '../obligations';
import { SourceLoader, basename } from './common';

/**
 * grill-with-docs: the branch's decision records and domain language, read as one set —
 * CONTEXT-MAP.md files, then CONTEXT.md files (each "**Term**: definition" entry one glossary
 * prose), then ADRs under docs/adr/ or docs/decisions/, by path. An ADR's Decision (or Decision
 * Outcome) is the statement, its Rationale (else its Context) the stated rationale, its
 * Considered Options / Alternatives the alternatives; Status, Consequences and every other
 * heading render as sections in source order.
 */

const DECISION = /^decision(?: outcome)?$/i;
const RATIONALE = /^rationale$/i;
const CONTEXT = /^context(?: and problem statement)?$/i;
const ALTERNATIVES = /^(?:considered options|options considered|alternatives(?: considered)?|options)$/i;

export async function readGrill(selection: Extract<Selection, { format: 'grill-with-docs' }>, loader: SourceLoader): Promise<SpecDocument> {
  const files: Block[] = [];
  for (const path of selection.touched) {
    const text = await loader.load(path);
    if (text === null) continue;
    const { file, root } = readFile(path, text);
    const kind = contextKind(path);
    if (kind === 'context') files.push(fileSection({ file, mode: () => 'glossary' }, root, path));
    else if (kind === 'map') files.push(fileSection({ file }, root, path));
    else files.push(adrSection(file, root));
  }
  return { format: 'grill-with-docs', title: LABELS.grillTitle, intro: LABELS.grillIntro, sources: [...loader.located], files, capabilities: null, ledger: null };
}

function adrSection(file: MdFile, root: MdNode): Block {
  const h1 = leadingTitle(file, root);
  const top = h1 ?? root;
  const title = (h1 && titleOf(h1)) || basename(file.path);
  const r: FileRenderer = { file };
  const decision = top.children.find((c) => DECISION.test(titleOf(c)));
  const statementSpan = decision ? lineSpan(file, decision.contentStart, decision.contentEnd) : null;
  if (!decision || !statementSpan) return fileSection(r, root, basename(file.path));

  const code: CodeSpan[] = [];
  const statement = textOf(file, decision.contentStart, decision.contentEnd, 0, code);
  const rationaleNode = top.children.find((c) => RATIONALE.test(titleOf(c))) ?? top.children.find((c) => CONTEXT.test(titleOf(c))) ?? null;
  const rationale = rationaleNode ? textOf(file, rationaleNode.contentStart, rationaleNode.end, 0, code) || null : null;
  const alternativesNode = top.children.find((c) => ALTERNATIVES.test(titleOf(c))) ?? null;
  const alternatives = alternativesNode ? topItemsOf(file, alternativesNode.contentStart, alternativesNode.end, code) : [];

  const preferred: Block[] = [];
  for (const child of top.children) {
    if (child === rationaleNode || child === alternativesNode) continue;
    if (child === decision) {
      preferred.push({ kind: 'decision-slot' });
      // What the Decision heading holds below its statement (MADR's Consequences) stays a section.
      for (const inner of child.children) preferred.push(...renderNode(r, inner));
      continue;
    }
    preferred.push(...renderNode(r, child));
  }
  const fallback = top.children.flatMap((child) => renderNode(r, child));
  const data = decisionData(title, statement, rationale, alternatives, file.path, statementSpan.start - 1, statementSpan.end, code);
  const own = contentOf(r, top.contentStart, top.contentEnd, 'plain');
  const front: Block[] = file.frontMatter ? [{ kind: 'prose', markdown: LABELS.frontMatter }] : [];
  return section(title, own.body, [...front, ...own.rows, { kind: 'decision', decision: data, preferred, fallback }], [file.path], own.code);
}

import type { Selection } from '../detect';
import { byPath } from '../detect';
import { blocksOf, itemText, textOf, titleOf, type MdFile, type MdNode } from '../markdown';
import { LABELS, renamedFromLabel, type Block, type CodeSpan, type SpecDelta, type SpecDocument } from '../model';
import {
  fileSection,
  genericSection,
  isDecisionsHeading,
  labelledOnly,
  isOpenSpecRequirement,
  listDecisions,
  openSpecRequirement,
  readFile,
  renderNode,
  section,
  subheadingDecision,
  type FileRenderer,
} from '../obligations';
import { SourceLoader, basename, findNode, isMarkdownPath, nodeText } from './common';

/**
 * OpenSpec. A change directory reads proposal.md (its Why is the intro; What Changes and Impact
 * are one row per listed item), design.md (stated decisions), each specs/<capability>/spec.md
 * (one capability root; ADDED/MODIFIED/REMOVED/RENAMED operation sections; requirements with
 * their scenarios and spec_delta), tasks.md (task groups), then any other Markdown it touches.
 * Without a change directory, the touched current specs under openspec/specs/ are read the same
 * way, with no delta.
 */

const DELTA_HEADING = /^(ADDED|MODIFIED|REMOVED|RENAMED)\s+Requirements$/i;

export async function readOpenSpec(selection: Extract<Selection, { format: 'openspec' }>, loader: SourceLoader): Promise<SpecDocument> {
  if (selection.kind === 'specs') return readCurrentSpecs(selection, loader);
  const root = selection.root;
  const changeId = basename(root);
  const files: Block[] = [];
  let intro: string | null = null;
  let capabilities = 0;

  const proposalPath = `${root}/proposal.md`;
  const proposal = await loader.load(proposalPath);
  if (proposal !== null) {
    const { file, root: node } = readFile(proposalPath, proposal);
    const why = findNode(node, /^why$/i);
    if (why) intro = nodeText(file, why) || null;
    files.push(proposalSection(file, node, why));
  }
  const designPath = `${root}/design.md`;
  const design = await loader.load(designPath);
  if (design !== null) files.push(designSection(designPath, design, 'design.md'));

  const specPaths = selection.touched.filter((p) => /\/specs\/[^/]+\/spec\.md$/.test(p) && p.startsWith(`${root}/specs/`)).sort(byPath);
  for (const path of specPaths) {
    const text = await loader.load(path);
    if (text === null) continue;
    capabilities++;
    files.push(capabilitySection(path, text, true));
  }
  const tasksPath = `${root}/tasks.md`;
  const tasks = await loader.load(tasksPath);
  if (tasks !== null) {
    const { file, root: node } = readFile(tasksPath, tasks);
    files.push(fileSection({ file }, node, 'tasks.md'));
  }
  const read = new Set([proposalPath, designPath, tasksPath, ...specPaths]);
  for (const path of selection.touched) {
    if (read.has(path) || !isMarkdownPath(path)) continue;
    const text = await loader.load(path);
    if (text === null) continue;
    const { file, root: node } = readFile(path, text);
    files.push(designLike(file, node, path.slice(root.length + 1)));
  }
  return { format: 'openspec', title: changeId, intro: intro ?? LABELS.noProposalWhy, sources: [...loader.located], files, capabilities, ledger: null };
}

async function readCurrentSpecs(selection: Extract<Selection, { format: 'openspec' }>, loader: SourceLoader): Promise<SpecDocument> {
  const files: Block[] = [];
  let intro: string | null = null;
  let capabilities = 0;
  for (const path of selection.touched) {
    const text = await loader.load(path);
    if (text === null) continue;
    if (/\/spec\.md$/.test(path)) {
      capabilities++;
      if (intro === null) {
        const { file, root } = readFile(path, text);
        const purpose = findNode(root, /^purpose$/i);
        if (purpose) intro = nodeText(file, purpose) || null;
      }
      files.push(capabilitySection(path, text, false));
    } else files.push(designSection(path, text, path.slice('openspec/specs/'.length)));
  }
  return { format: 'openspec', title: LABELS.openspecSpecsTitle, intro: intro ?? LABELS.specsIntro, sources: [...loader.located], files, capabilities, ledger: null };
}

/**
 * proposal.md: Why is the document's intro (not repeated); What Changes and Impact are rows. A
 * proposal's code blocks are illustration: each is left out and its place stated by its label,
 * never cited.
 */
function proposalSection(file: MdFile, root: MdNode, why: MdNode | null): Block {
  const r: FileRenderer = {
    file,
    special: (node) => (node === why ? [] : null),
    mode: (node) => (/^(what changes|impact)$/i.test(titleOf(node)) ? 'rows' : 'plain'),
  };
  return labelledOnly([fileSection(r, root, 'proposal.md')])[0] as Block;
}

function designSection(path: string, text: string, fallbackTitle: string): Block {
  const { file, root } = readFile(path, text);
  return designLike(file, root, fallbackTitle);
}

/** A design document: a Decisions heading's subheadings (or Decision: items) are stated decisions. */
export function designLike(file: MdFile, root: MdNode, fallbackTitle: string): Block {
  return fileSection(decisionRenderer(file), root, fallbackTitle);
}

export function decisionRenderer(file: MdFile): FileRenderer {
  const r: FileRenderer = {
    file,
    special: (node, self) => {
      if (!isDecisionsHeading(node)) return null;
      const blocks = blocksOf(file, node.contentStart, node.contentEnd);
      const last = blocks[blocks.length - 1];
      const shaped = last?.kind === 'list' && blocks.slice(0, -1).every((b) => b.kind === 'para');
      const listed = shaped && last?.kind === 'list' ? listDecisions(file, last.items) : null;
      if (node.children.length === 0 && !listed) return null;
      const children: Block[] = [];
      const code: CodeSpan[] = [];
      let body: string | null = null;
      if (listed) {
        const lead = blocks.slice(0, -1);
        body = lead.length > 0 ? textOf(file, (lead[0] as { start: number }).start, (lead[lead.length - 1] as { end: number }).end, 0, code) || null : null;
        children.push(...listed);
      } else {
        const own = genericSection(self, { ...node, children: [] }, titleOf(node));
        body = own.body === LABELS.emptyHeading || own.body === LABELS.rowsFollow ? null : own.body;
        code.push(...(own.code ?? []));
        children.push(...own.children);
      }
      for (const child of node.children) children.push(subheadingDecision(self, child));
      return [section(titleOf(node), body, children, undefined, code)];
    },
  };
  return r;
}

/**
 * One capability file: one source-linked root titled by its H1 (else the capability); delta operation
 * sections beneath it in source order, each requirement carrying its operation.
 */
function capabilitySection(path: string, text: string, delta: boolean): Block {
  const { file, root } = readFile(path, text);
  const capability = path.match(/\/specs\/([^/]+)\/[^/]+$/)?.[1] ?? basename(path);
  const r: FileRenderer = {
    file,
    special: (node) => {
      const op = titleOf(node).match(DELTA_HEADING);
      if (op && delta) return [operationSection(file, node, (op[1] as string).toLowerCase() as SpecDelta, r)];
      if (isOpenSpecRequirement(node)) return [openSpecRequirement(file, node, null)];
      return null;
    },
  };
  // Titled by the file's own H1 when it opens with one (its words are the specification's), else by the capability.
  return fileSection(r, root, capability);
}

function operationSection(file: MdFile, node: MdNode, op: SpecDelta, r: FileRenderer): Block {
  if (op === 'renamed') {
    const renamed = renamedRequirements(file, node);
    if (renamed) return section(titleOf(node), null, renamed);
  }
  const children: Block[] = [];
  for (const child of node.children) {
    if (isOpenSpecRequirement(child)) children.push(openSpecRequirement(file, child, op));
    else children.push(...renderNode(r, child));
  }
  const own = genericSection(r, { ...node, children: [] }, titleOf(node));
  const body = own.body !== LABELS.emptyHeading && own.body !== LABELS.rowsFollow ? own.body : null;
  return section(titleOf(node), body, [...own.children, ...children], undefined, own.code);
}

const REQUIREMENT_REF = /^`?(?:#{1,6}\s*)?Requirement:\s*(.+?)`?\s*$/;

/** "- FROM: `### Requirement: Old`" / "- TO: `### Requirement: New`" pairs. */
function renamedRequirements(file: MdFile, node: MdNode): Block[] | null {
  const out: Block[] = [];
  let from: { name: string; line: number } | null = null;
  for (const block of blocksOf(file, node.contentStart, node.contentEnd)) {
    if (block.kind !== 'list') continue;
    for (const item of block.items) {
      const text = itemText(file, item, false);
      const pair = text.match(/^(?:\*\*)?(FROM|TO)(?:\*\*)?:\s*(.+)$/);
      if (!pair) return null;
      const name = (pair[2] as string).trim().match(REQUIREMENT_REF)?.[1]?.trim();
      if (!name) return null;
      if (pair[1] === 'FROM') from = { name, line: item.start + 1 };
      else if (from) {
        out.push({
          kind: 'requirement',
          title: name,
          shall: renamedFromLabel(from.name),
          sourcePath: file.path,
          sourceLine: from.line,
          candidate: `Requirement: ${name}`,
          delta: 'renamed',
          scenarios: [],
          notes: [],
        });
        from = null;
      } else return null;
    }
  }
  return out.length > 0 && from === null ? out : null;
}

import type { Selection } from '../detect';
import { leadingTitle, lineSpan, textOf, titleOf, type MdFile, type MdNode } from '../markdown';
import { LABELS, SpecParseError, type Block, type CodeSpan, type SpecDocument } from '../model';
import { criteriaOf, fileSection, readFile, storyRequirement, withCode, type FileRenderer } from '../obligations';
import { SourceLoader, basename, findNode, nodeText } from './common';
import { decisionRenderer } from './openspec';

/**
 * BMAD. A story file is one requirement: its Story text (As a … I want … so that …) is the
 * normative text and the intro, its numbered Acceptance Criteria the scenarios; Status, Tasks /
 * Subtasks (check boxes, subtasks included, marks kept) and every other heading render in
 * source order. Without a story, the PRD and epics ("FR1: …" / "NFR1: …" items are requirements,
 * each "Story n.m" with its acceptance criteria, under a heading or a bold label, a requirement)
 * and the architecture document (stated decisions) are read: BMAD v6's under
 * _bmad-output/planning-artifacts/, else docs/prd.md and docs/architecture.md.
 */

const FUNCTIONAL = /^(?:\*\*)?(N?FR\d+)(?:\*\*)?\s*:\s*([\s\S]+)$/;
const STORY_HEADING = /^Story\s+(\d+(?:\.\d+)*)\b/i;

export async function readBmad(selection: Extract<Selection, { format: 'bmad' }>, loader: SourceLoader): Promise<SpecDocument> {
  if (selection.kind === 'story') return readStory(selection.root, loader);
  const files: Block[] = [];
  let title: string | null = null;
  let intro: string | null = null;
  for (const path of selection.touched) {
    const text = await loader.load(path);
    if (text === null) continue;
    const { file, root } = readFile(path, text);
    const h1 = leadingTitle(file, root);
    if (title === null && h1) title = titleOf(h1) || null;
    if (basename(path) === 'prd.md' || basename(path) === 'epics.md') {
      const background = findNode(root, /^background context$/i) ?? findNode(root, /^goals/i);
      if (background && intro === null) intro = nodeText(file, background) || null;
      files.push(fileSection(prdRenderer(file), root, basename(path)));
    } else files.push(fileSection(decisionRenderer(file), root, basename(path)));
  }
  return { format: 'bmad', title: title ?? basename(selection.touched[0] ?? 'docs'), intro: intro ?? LABELS.noIntroduction, sources: [...loader.located], files, capabilities: null, ledger: null };
}

function prdRenderer(file: MdFile): FileRenderer {
  return {
    file,
    special: (node) => {
      const story = titleOf(node).match(STORY_HEADING);
      return story ? [storyRequirement(file, node, story[1] as string)] : null;
    },
    item: (f, item, text, code) => {
      const match = text.match(FUNCTIONAL);
      if (!match) return null;
      return {
        ...withCode(code),
        kind: 'requirement',
        title: match[1] as string,
        shall: (match[2] as string).trim(),
        sourcePath: f.path,
        sourceLine: item.start + 1,
        candidate: match[1] as string,
        delta: null,
        scenarios: [],
        notes: [],
      };
    },
  };
}

async function readStory(path: string, loader: SourceLoader): Promise<SpecDocument> {
  const text = await loader.load(path);
  if (text === null) throw new SpecParseError('spec-unreadable', path, null, 'the story could not be read at the reviewed head');
  const { file, root } = readFile(path, text);
  const h1 = leadingTitle(file, root);
  const top = h1 ?? root;
  const title = (h1 && titleOf(h1)) || basename(path);
  const storyNode = top.children.find((c) => /^story$/i.test(titleOf(c))) ?? null;
  const criteriaNode = top.children.find((c) => /^acceptance criteria/i.test(titleOf(c))) ?? null;
  let intro: string | null = null;
  const r: FileRenderer = {
    file,
    special: (node) => {
      if (node === storyNode) {
        const requirement = storyAsRequirement(file, node, criteriaNode, title);
        intro = requirement.kind === 'requirement' ? requirement.shall : null;
        return [requirement];
      }
      if (node === criteriaNode && storyNode) return [];
      return null;
    },
  };
  const files = [fileSection(r, root, basename(path))];
  return { format: 'bmad', title, intro: intro ?? LABELS.noIntroduction, sources: [...loader.located], files, capabilities: null, ledger: null };
}

function storyAsRequirement(file: MdFile, story: MdNode, criteria: MdNode | null, title: string): Block {
  const line = (story.heading?.index ?? 0) + 1;
  const code: CodeSpan[] = [];
  const shall = textOf(file, story.contentStart, story.end, 0, code);
  if (shall === '' || lineSpan(file, story.contentStart, story.end) === null) {
    throw new SpecParseError('spec-requirement-text', file.path, line, 'the story has no As a … I want … so that … text');
  }
  // Whatever the criteria heading holds besides its criteria (a traceability line, a group
  // heading, a phase label) stays with the requirement as a note: the heading is not rendered again.
  const { scenarios, notes } = criteria ? criteriaOf(file, criteria, null, code) : { scenarios: [], notes: [] };
  return { kind: 'requirement', title, shall, sourcePath: file.path, sourceLine: line, candidate: titleOf(story), delta: null, scenarios, notes: notes.map((n) => n.text), ...withCode(code) };
}

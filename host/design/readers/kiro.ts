import type { Selection } from '../detect';
import { titleOf } from '../markdown';
import { LABELS, type Block, type SpecDocument } from '../model';
import { fileSection, readFile, storyRequirement, type FileRenderer } from '../obligations';
import { SourceLoader, basename, findNode, isMarkdownPath, nodeText } from './common';
import { designLike } from './openspec';

/**
 * Kiro. A feature directory reads requirements.md (Introduction is the intro; each
 * "Requirement N" a requirement whose normative text is its user story and whose numbered
 * acceptance criteria are its scenarios, split when EARS-shaped; a Glossary heading's entries
 * are glossary prose), or bugfix.md (its behaviour sections one row per item), then design.md
 * (stated decisions), tasks.md (numbered check boxes with their _Requirements_ detail), then any
 * other Markdown it touches. Steering documents alone render as sections.
 */

const REQUIREMENT_N = /^Requirement\s+(\d+(?:\.\d+)*)\b/i;

export async function readKiro(selection: Extract<Selection, { format: 'kiro' }>, loader: SourceLoader): Promise<SpecDocument> {
  const files: Block[] = [];
  if (selection.kind === 'steering') {
    for (const path of selection.touched) {
      const text = await loader.load(path);
      if (text === null) continue;
      const { file, root } = readFile(path, text);
      files.push(fileSection({ file }, root, basename(path)));
    }
    return { format: 'kiro', title: LABELS.kiroSteeringTitle, intro: LABELS.steeringIntro, sources: [...loader.located], files, capabilities: null, ledger: null };
  }

  const root = selection.root;
  let intro: string | null = null;
  const order = ['requirements.md', 'bugfix.md', 'design.md', 'tasks.md'].map((name) => `${root}/${name}`);
  for (const path of order) {
    const text = await loader.load(path);
    if (text === null) continue;
    const { file, root: node } = readFile(path, text);
    const name = basename(path);
    if (name === 'requirements.md' || name === 'bugfix.md') {
      const introduction = findNode(node, /^introduction$/i);
      if (introduction && intro === null) intro = nodeText(file, introduction) || null;
      const r: FileRenderer = {
        file,
        special: (n) => {
          if (n === introduction) return [];
          const number = titleOf(n).match(REQUIREMENT_N);
          if (number) return [storyRequirement(file, n, number[1] as string)];
          return null;
        },
        mode: (n) => (/glossary/i.test(titleOf(n)) ? 'glossary' : /behaviou?r/i.test(titleOf(n)) ? 'rows' : 'plain'),
      };
      files.push(fileSection(r, node, name));
    } else if (name === 'design.md') files.push(designLike(file, node, name));
    else files.push(fileSection({ file }, node, name));
  }
  for (const path of selection.touched) {
    if (order.includes(path) || !isMarkdownPath(path)) continue;
    const text = await loader.load(path);
    if (text === null) continue;
    const { file, root: node } = readFile(path, text);
    files.push(fileSection({ file }, node, path.slice(root.length + 1)));
  }
  return { format: 'kiro', title: basename(root), intro: intro ?? LABELS.noIntroduction, sources: [...loader.located], files, capabilities: null, ledger: null };
}

import type { Selection } from '../detect';
import { SUPERPOWERS_LEGACY, SUPERPOWERS_PLAN, SUPERPOWERS_SPEC } from '../detect';
import { leadingTitle, titleOf } from '../markdown';
import { LABELS, type Block, type SpecDocument } from '../model';
import { fileSection, readFile } from '../obligations';
import { SourceLoader, basename, firstParagraph, isMarkdownPath, labelledParagraph } from './common';
import { designLike } from './openspec';

/**
 * Superpowers. One topic: the design (docs/superpowers/specs/<date>-<topic>-design.md, stated
 * decisions) then the plan (docs/superpowers/plans/<date>-<topic>.md: each "### Task N: <name>"
 * a task group; its **Files:** list rows; its "- [ ] Step" lines tasks with the plan's own
 * marks; code blocks labelled). The plan's **Goal:** is the intro. A touched progress ledger is
 * read only when its first line binds the selected plan path exactly; only "Task N: complete
 * (…)" lines complete a group, every other line stays visible and counts for nothing.
 */

const TASK_GROUP = /^Task\s+(\d+)\s*:/i;
const LEDGER_COMPLETE = /^\s*(?:[-*+]\s+)?Task\s+(\d+):\s+complete\s+\(.*\)\s*$/;

/** True when the ledger's first line names exactly this plan path (after a heading marker and an optional label). */
export function ledgerBinds(firstLine: string, planPath: string): boolean {
  const line = firstLine.replace(/^#+\s*/, '').trim();
  if (line === planPath) return true;
  const labelled = line.match(/^[A-Za-z][A-Za-z ]*:\s*(.+)$/);
  return !!labelled && (labelled[1] as string).trim().replace(/^`(.*)`$/, '$1') === planPath;
}

export async function readSuperpowers(selection: Extract<Selection, { format: 'superpowers' }>, loader: SourceLoader): Promise<SpecDocument> {
  const files: Block[] = [];
  let title: string | null = null;
  let intro: string | null = null;
  if (selection.design) {
    const text = await loader.load(selection.design);
    if (text !== null) {
      const { file, root } = readFile(selection.design, text);
      const h1 = leadingTitle(file, root);
      if (h1) {
        title = titleOf(h1) || null;
        intro = firstParagraph(file, h1);
      }
      files.push(designLike(file, root, basename(selection.design)));
    }
  }
  let groups: number[] = [];
  if (selection.plan) {
    const text = await loader.load(selection.plan);
    if (text !== null) {
      const { file, root } = readFile(selection.plan, text);
      const h1 = leadingTitle(file, root);
      if (h1) {
        title = titleOf(h1) || title;
        intro = labelledParagraph(file, h1, /^\*\*Goal:?\*\*:?\s*/) ?? intro;
      }
      groups = file.headings
        .map((h) => h.text.match(TASK_GROUP)?.[1])
        .filter((n): n is string => !!n)
        .map(Number);
      files.push(fileSection({ file }, root, basename(selection.plan)));
    }
  }
  let ledger: SpecDocument['ledger'] = null;
  if (selection.plan) {
    for (const path of selection.touched) {
      if (!isMarkdownPath(path) || SUPERPOWERS_PLAN.test(path) || SUPERPOWERS_SPEC.test(path) || SUPERPOWERS_LEGACY.test(path)) continue;
      const text = await loader.peek(path);
      if (text === null) continue;
      const firstLine = text.replace(/\r\n?/g, '\n').split('\n')[0] ?? '';
      if (!ledgerBinds(firstLine, selection.plan)) continue;
      loader.record(path);
      const { file, root } = readFile(path, text);
      const complete = new Set<number>();
      for (const line of file.lines) {
        const done = line.match(LEDGER_COMPLETE);
        if (done && groups.includes(Number(done[1]))) complete.add(Number(done[1]));
      }
      ledger = { complete: complete.size, groups: groups.length };
      files.push(fileSection({ file }, root, basename(path)));
      break;
    }
  }
  const topic = selection.plan ?? selection.design ?? 'superpowers';
  return { format: 'superpowers', title: title ?? basename(topic).replace(/\.md$/, ''), intro: intro ?? LABELS.noIntroduction, sources: [...loader.located], files, capabilities: null, ledger };
}

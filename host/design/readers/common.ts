import { safeRead, type ReadHeadFile } from '../detect';
import { blocksOf, textOf, titleOf, type MdFile, type MdNode } from '../markdown';
import { SpecParseError } from '../model';

/**
 * Reads a selection's files at the reviewed head. A file the change touches must read; a file
 * probed by its conventional name (proposal.md beside a touched spec delta) may be absent.
 * Every path read is recorded once, in reading order: those are the sources.
 */
export class SourceLoader {
  readonly located: string[] = [];
  private readonly touched: ReadonlySet<string>;

  constructor(
    private readonly read: ReadHeadFile,
    touched: Iterable<string>,
  ) {
    this.touched = new Set(touched);
  }

  async load(path: string): Promise<string | null> {
    const text = await safeRead(this.read, path);
    if (text === null) {
      if (this.touched.has(path)) throw new SpecParseError('spec-unreadable', path, null, 'the file could not be read at the reviewed head');
      return null;
    }
    this.record(path);
    return text;
  }

  /** Reads without making the file a source (a candidate the reader may still reject). */
  async peek(path: string): Promise<string | null> {
    return safeRead(this.read, path);
  }

  record(path: string): void {
    if (!this.located.includes(path)) this.located.push(path);
  }
}

export const isMarkdownPath = (path: string) => /\.(md|markdown)$/i.test(path);
export const basename = (path: string) => path.slice(path.lastIndexOf('/') + 1);

/** Depth-first search for the first node whose heading matches. */
export function findNode(node: MdNode, test: RegExp): MdNode | null {
  for (const child of node.children) {
    if (test.test(titleOf(child))) return child;
    const inner = findNode(child, test);
    if (inner) return inner;
  }
  return null;
}

/** A node's whole text (its own content and every subheading), verbatim, code blocks labelled. */
export function nodeText(file: MdFile, node: MdNode): string {
  return textOf(file, node.contentStart, node.end);
}

/** The text after a "**Label:**" paragraph prefix, from the first paragraph that carries it. */
export function labelledParagraph(file: MdFile, node: MdNode, label: RegExp): string | null {
  for (const block of blocksOf(file, node.contentStart, node.contentEnd)) {
    if (block.kind !== 'para') continue;
    const text = textOf(file, block.start, block.end);
    const match = text.match(label);
    if (match) return text.slice((match[0] as string).length).trim() || null;
  }
  return null;
}

/** The first paragraph of a node's own content, verbatim. */
export function firstParagraph(file: MdFile, node: MdNode): string | null {
  const para = blocksOf(file, node.contentStart, node.contentEnd).find((b) => b.kind === 'para');
  return para ? textOf(file, para.start, para.end) || null : null;
}

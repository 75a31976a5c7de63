import assert from 'node:assert/strict';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { readCapturedBlob } from '../../../host/capture/blob';
import { capturePatchset } from '../../../host/capture/capture';
import { openRepo } from '../../../host/capture/repo';
import type { BoardState } from '../../../host/board/state';
import type { BoardElement, ElementKind, ElementOf } from '../../../protocol/board';
import type { Patchset } from '../../../protocol/patchset';
import { TestRepo } from '../../fixtures/gitRepo';

/** Shared fixtures for the Design assembler suites: real repositories whose feature branch adds a spec. */

export const SPEC_FIXTURES = join(__dirname, '..', '..', 'fixtures', 'specs');

export interface SpecBranch {
  repo: TestRepo;
  patchset: Patchset;
  read: (path: string) => Promise<string | null>;
}

/**
 * A repository with a one-file main branch and a feature branch that copies the named fixture
 * folders (test/fixtures/specs/<name>/, laid out as repository paths) and applies `edit`.
 */
export async function specBranch(fixtures: readonly string[], edit?: (repo: TestRepo) => void, base?: (repo: TestRepo) => void): Promise<SpecBranch> {
  const repo = new TestRepo();
  repo.write('src/app.ts', 'export const app = 1;\n');
  base?.(repo);
  repo.commit('base');
  repo.branch('feature');
  for (const name of fixtures) cpSync(join(SPEC_FIXTURES, name), repo.dir, { recursive: true });
  edit?.(repo);
  repo.commit('spec');
  const handle = await openRepo(repo.dir);
  assert.ok(handle.ok, handle.ok ? '' : handle.error.message);
  const captured = await capturePatchset(handle.value, { kind: 'branch', head: 'feature', base: 'main' });
  assert.ok(captured.ok, captured.ok ? '' : captured.error.message);
  const patchset = captured.value;
  const read = async (path: string): Promise<string | null> => {
    const blob = await readCapturedBlob(repo.dir, patchset, path, 'head');
    return blob.ok ? blob.value.text : null;
  };
  return { repo, patchset, read };
}

export function elements(state: BoardState): BoardElement[] {
  return [...state.elements.values()];
}

export function ofKind<K extends ElementKind>(state: BoardState, kind: K): Array<ElementOf<K>> {
  return elements(state).filter((el): el is ElementOf<K> => el.kind === kind);
}

export function childrenOf(state: BoardState, id: string): BoardElement[] {
  return elements(state).filter((el) => el.parent === id);
}

/** The one stat element's labels → values. */
export function stats(state: BoardState): Record<string, string> {
  const [stat, ...rest] = ofKind(state, 'stat');
  assert.ok(stat, 'the board has a stat element');
  assert.equal(rest.length, 0, 'one stat element');
  return Object.fromEntries(stat.stat_labels.map((label, i) => [label, stat.stat_values[i] as string]));
}

/** A readable outline of a board, for failure messages. */
export function outlineOf(state: BoardState): string {
  const lines: string[] = [`# ${state.document.title}`, state.document.intro_markdown];
  const walk = (parent: string | null, depth: number) => {
    for (const el of elements(state).filter((e) => e.parent === parent)) {
      const label =
        el.kind === 'section'
          ? el.title
          : el.kind === 'requirement'
            ? `${el.title} :: ${el.shall}`
            : el.kind === 'scenario'
              ? `${el.name} [${el.scenario_condition ?? ''} => ${el.scenario_response ?? ''}]`
              : el.kind === 'task'
                ? `[${el.done ? 'x' : ' '}] ${el.text}`
                : el.kind === 'prose'
                  ? el.markdown.replace(/\n/g, ' / ')
                  : el.kind === 'decision'
                    ? `${el.title} :: ${el.statement}`
                    : el.kind === 'stat'
                      ? el.stat_labels.map((l, i) => `${l}=${el.stat_values[i]}`).join(', ')
                      : el.kind;
      lines.push(`${'  '.repeat(depth)}${el.id} ${el.kind}: ${label}`);
      walk(el.id, depth + 1);
    }
  };
  walk(null, 0);
  return lines.join('\n');
}

/**
 * specBranch for a describe block: every branch made is cleaned up after the block
 * (`const branch = specBranches();` at describe level, then `await branch([...])`).
 */
export function specBranches(): (...args: Parameters<typeof specBranch>) => Promise<SpecBranch> {
  const made: SpecBranch[] = [];
  after(() => made.forEach((b) => b.repo.cleanup()));
  return async (...args) => {
    const b = await specBranch(...args);
    made.push(b);
    return b;
  };
}

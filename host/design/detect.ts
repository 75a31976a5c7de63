import type { Patchset } from '../../protocol/patchset';
import { SPEC_ARTIFACT_ROOTS } from '../board/noise';

/**
 * Which specification a patchset carries: the first format it touches, in the fixed order
 * OpenSpec, Kiro, BMAD, Superpowers, grill-with-docs, and within a format one specification
 * (the first by path when a branch touches several). Detection reads paths, probes conventional
 * names, and reads a docs/plans/ plan for its superpowers: mark; plus one probe
 * for a BMAD installation; it never merges two specifications.
 */

export type Selection =
  /** OpenSpec: one change directory (an archived change counts as its own directory). */
  | { format: 'openspec'; kind: 'change'; root: string; touched: string[] }
  /** OpenSpec: no change directory, but current capability specs under openspec/specs/. */
  | { format: 'openspec'; kind: 'specs'; root: string; touched: string[] }
  | { format: 'kiro'; kind: 'feature'; root: string; touched: string[] }
  | { format: 'kiro'; kind: 'steering'; root: string; touched: string[] }
  | { format: 'bmad'; kind: 'story'; root: string; touched: string[] }
  | { format: 'bmad'; kind: 'planning'; root: string; touched: string[] }
  | { format: 'superpowers'; kind: 'topic'; plan: string | null; design: string | null; touched: string[] }
  | { format: 'grill-with-docs'; kind: 'records'; touched: string[] };

export type ReadHeadFile = (path: string) => Promise<string | null>;

/** Head-side paths the change leaves in place (added, modified, renamed), sorted. */
export function touchedPaths(patchset: Pick<Patchset, 'files'>): string[] {
  return patchset.files
    .filter((f) => f.status !== 'deleted' && !f.submodule)
    .map((f) => f.path)
    .sort(byPath);
}

export function byPath(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const isMarkdown = (path: string) => /\.(md|markdown)$/i.test(path);
const under = (root: string) => (path: string) => path.startsWith(`${root}/`);
const first = <T>(values: Iterable<T>): T | undefined => [...values].sort()[0];

/**
 * OpenSpec selects a change by directory and a directory only: a file directly under
 * openspec/changes/ (the README.md index) selects nothing. An active change sorts before an
 * archived one.
 */
export function selectOpenSpec(paths: readonly string[]): Selection | null {
  const active = new Set<string>();
  const archived = new Set<string>();
  const specs: string[] = [];
  for (const path of paths) {
    const change = path.match(/^openspec\/changes\/([^/]+)\/(.+)$/);
    if (change) {
      if (change[1] === 'archive') {
        const inner = (change[2] as string).match(/^([^/]+)\/.+$/);
        if (inner) archived.add(`openspec/changes/archive/${inner[1]}`);
      } else active.add(`openspec/changes/${change[1]}`);
      continue;
    }
    if (/^openspec\/specs\/[^/]+\/.+/.test(path) && isMarkdown(path)) specs.push(path);
  }
  const root = first(active) ?? first(archived);
  if (root) return { format: 'openspec', kind: 'change', root, touched: paths.filter(under(root)) };
  if (specs.length > 0) return { format: 'openspec', kind: 'specs', root: 'openspec/specs', touched: [...specs].sort(byPath) };
  return null;
}

/** The files a Kiro feature directory holds; the directory of a touched one is the feature. */
export const KIRO_FEATURE_FILES = ['requirements.md', 'bugfix.md', 'design.md', 'tasks.md'] as const;

/**
 * Kiro selects a feature directory under .kiro/specs/: the directory that holds a touched
 * requirements.md, bugfix.md, design.md or tasks.md (so a feature kept in a subfolder such as
 * .kiro/specs/_archived/<feature>/ is that feature), else the first directory under .kiro/specs/.
 * Steering documents alone are their own selection.
 */
export function selectKiro(paths: readonly string[]): Selection | null {
  const features = new Set<string>();
  const holders = new Set<string>();
  const steering: string[] = [];
  for (const path of paths) {
    const feature = path.match(/^\.kiro\/specs\/([^/]+)\/.+/);
    if (feature) {
      features.add(`.kiro/specs/${feature[1]}`);
      const dir = path.slice(0, path.lastIndexOf('/'));
      if ((KIRO_FEATURE_FILES as readonly string[]).includes(path.slice(dir.length + 1))) holders.add(dir);
    } else if (/^\.kiro\/steering\/[^/]+$/.test(path) && isMarkdown(path)) steering.push(path);
  }
  const root = first(holders) ?? first(features);
  if (root) return { format: 'kiro', kind: 'feature', root, touched: paths.filter(under(root)) };
  if (steering.length > 0) return { format: 'kiro', kind: 'steering', root: '.kiro/steering', touched: steering };
  return null;
}

/**
 * Where BMAD keeps stories: docs/stories/ (v4, also in epic subfolders), and BMAD v6's
 * implementation artifacts, _bmad-output/implementation-artifacts/ (beside sprint-status.yaml).
 */
export const BMAD_STORY = /^(?:docs\/stories|_bmad-output\/implementation-artifacts)\/(?:[^/]+\/)*([^/]+)$/;
/** Names a story file gives itself: 1.2…md, 1-2-<slug>.md and 0-i2a-<slug>.md (BMAD v6), story-…md, …story.md. */
const STORY_NAME = /^(?:\d+\.\d+|\d+-[a-z]*\d+[a-z]*-|story-)|\.story\.md$/i;
export const BMAD_PLANNING = ['docs/prd.md', 'docs/architecture.md'] as const;
/** BMAD v6's planning artifacts: the path is BMAD's own, so no installation probe is needed. */
export const BMAD_PLANNING_V6 = ['_bmad-output/planning-artifacts/prd.md', '_bmad-output/planning-artifacts/epics.md', '_bmad-output/planning-artifacts/architecture.md'] as const;
/** The file a BMAD installation writes; its presence makes docs/prd.md and docs/architecture.md BMAD's. */
export const BMAD_CONFIG = '.bmad-core/core-config.yaml';

/**
 * BMAD selects one story (docs/stories/ or _bmad-output/implementation-artifacts/: <n.m>…md, <n>-<m>-…md, story-…md or …story.md); without one, the
 * v6 planning artifacts (_bmad-output/planning-artifacts/ prd.md, epics.md, architecture.md), else
 * the PRD and architecture documents under docs/, but only in a repository that carries BMAD (a
 * touched .bmad-core/ or .bmad/ path, or .bmad-core/core-config.yaml at the head).
 */
export async function selectBmad(paths: readonly string[], read: ReadHeadFile): Promise<Selection | null> {
  const stories = paths.filter((p) => {
    const name = p.match(BMAD_STORY)?.[1];
    return !!name && isMarkdown(name) && STORY_NAME.test(name);
  });
  const story = stories[0];
  if (story) return { format: 'bmad', kind: 'story', root: story, touched: [story] };
  const v6 = BMAD_PLANNING_V6.filter((p) => paths.includes(p));
  if (v6.length > 0) return { format: 'bmad', kind: 'planning', root: '_bmad-output/planning-artifacts', touched: [...v6] };
  const planning = paths.filter((p) => (BMAD_PLANNING as readonly string[]).includes(p));
  if (planning.length === 0) return null;
  const installed = paths.some((p) => p.startsWith('.bmad-core/') || p.startsWith('.bmad/')) || (await safeRead(read, BMAD_CONFIG)) !== null;
  if (!installed) return null;
  return { format: 'bmad', kind: 'planning', root: 'docs', touched: BMAD_PLANNING.filter((p) => planning.includes(p)) };
}

export const SUPERPOWERS_PLAN = /^docs\/superpowers\/plans\/([^/]+)\.md$/;
export const SUPERPOWERS_SPEC = /^docs\/superpowers\/specs\/([^/]+)\.md$/;
/**
 * Where Superpowers kept both before docs/superpowers/: docs/plans/<date>-<topic>-design.md (the
 * brainstormed design) and docs/plans/<date>-<topic>.md, -plan.md or -implementation.md (the
 * plan). Only dated names count, and a plan there only when it names a superpowers: skill (the
 * plan header writing-plans puts at its top) or has a design of its topic.
 */
export const SUPERPOWERS_LEGACY = /^docs\/plans\/(\d{4}-\d{2}-\d{2}-[^/]+)\.md$/;
const LEGACY_DESIGN = /-design$/;
const LEGACY_PLAN_SUFFIX = /-(?:plan|implementation(?:-plan)?)$/;
const SUPERPOWERS_MARK = /\bsuperpowers:[a-z]/i;

/** The topic of a plan or design file: its name without the -design suffix (in docs/plans/, without -plan or -implementation either). */
export function superpowersTopic(path: string): string | null {
  const plan = path.match(SUPERPOWERS_PLAN)?.[1];
  if (plan) return plan;
  const spec = path.match(SUPERPOWERS_SPEC)?.[1];
  if (spec) return spec.replace(/-design$/, '');
  const legacy = path.match(SUPERPOWERS_LEGACY)?.[1];
  return legacy ? legacy.replace(LEGACY_DESIGN, '').replace(LEGACY_PLAN_SUFFIX, '') : null;
}

const undated = (topic: string) => topic.replace(/^\d{4}-\d{2}-\d{2}-/, '');
const isLegacyDesign = (path: string) => LEGACY_DESIGN.test(path.match(SUPERPOWERS_LEGACY)?.[1] ?? '');

/**
 * Superpowers selects one topic: the first touched plan with its design (same topic, or the
 * same topic under another date), or the first touched design with its plan. docs/superpowers/
 * is read first; the older docs/plans/ layout only when the branch touches nothing there.
 */
export async function selectSuperpowers(paths: readonly string[], read: ReadHeadFile): Promise<Selection | null> {
  const current = await selectSuperpowersIn(
    paths.filter((p) => SUPERPOWERS_PLAN.test(p)),
    paths.filter((p) => SUPERPOWERS_SPEC.test(p)),
    read,
    (topic) => ({
      designs: [`docs/superpowers/specs/${topic}-design.md`, `docs/superpowers/specs/${topic}.md`],
      plans: [`docs/superpowers/plans/${topic}.md`],
    }),
  );
  if (current) {
    const touched = paths.filter((p) => p.startsWith('docs/superpowers/') || p.startsWith('.superpowers/'));
    return { format: 'superpowers', kind: 'topic', ...current, touched };
  }
  const legacy = paths.filter((p) => SUPERPOWERS_LEGACY.test(p));
  const designs = legacy.filter(isLegacyDesign);
  const probes = (topic: string) => ({
    designs: [`docs/plans/${topic}-design.md`],
    plans: [`docs/plans/${topic}.md`, `docs/plans/${topic}-plan.md`, `docs/plans/${topic}-implementation.md`, `docs/plans/${topic}-implementation-plan.md`],
  });
  const plans: string[] = [];
  for (const path of legacy.filter((p) => !isLegacyDesign(p))) {
    const topic = superpowersTopic(path) as string;
    const marked = SUPERPOWERS_MARK.test((await safeRead(read, path)) ?? '');
    if (marked || designs.some((d) => superpowersTopic(d) === topic) || (await firstReadable(read, probes(topic).designs)) !== null) plans.push(path);
  }
  const older = await selectSuperpowersIn(plans, designs, read, probes);
  if (!older) return null;
  return { format: 'superpowers', kind: 'topic', ...older, touched: [older.plan, older.design].filter((p): p is string => p !== null && paths.includes(p)) };
}

async function selectSuperpowersIn(
  plans: readonly string[],
  specs: readonly string[],
  read: ReadHeadFile,
  probes: (topic: string) => { designs: string[]; plans: string[] },
): Promise<{ plan: string | null; design: string | null } | null> {
  const topicOf = (p: string) => superpowersTopic(p) as string;
  let plan: string | null = plans[0] ?? null;
  let design: string | null = null;
  if (plan) {
    const topic = topicOf(plan);
    design = specs.find((s) => topicOf(s) === topic) ?? specs.find((s) => undated(topicOf(s)) === undated(topic)) ?? null;
    design ??= await firstReadable(read, probes(topic).designs);
  } else if (specs[0]) {
    design = specs[0];
    plan = await firstReadable(read, probes(topicOf(design)).plans);
  } else return null;
  return { plan, design };
}

async function firstReadable(read: ReadHeadFile, candidates: readonly string[]): Promise<string | null> {
  for (const candidate of candidates) if ((await safeRead(read, candidate)) !== null) return candidate;
  return null;
}

const rootMatching = (pattern: string) => SPEC_ARTIFACT_ROOTS.find((r) => r.pattern === pattern);

export function isAdrPath(path: string): boolean {
  return !!(rootMatching('**/docs/adr/**/*.md')?.matches(path) || rootMatching('**/docs/decisions/**/*.md')?.matches(path));
}

export function contextKind(path: string): 'context' | 'map' | null {
  if (rootMatching('**/CONTEXT-MAP.md')?.matches(path)) return 'map';
  if (rootMatching('**/CONTEXT.md')?.matches(path)) return 'context';
  return null;
}

/** grill-with-docs: every touched ADR, CONTEXT.md and CONTEXT-MAP.md — one documentation set. */
export function selectGrill(paths: readonly string[]): Selection | null {
  const maps = paths.filter((p) => contextKind(p) === 'map');
  const contexts = paths.filter((p) => contextKind(p) === 'context');
  const adrs = paths.filter(isAdrPath);
  const touched = [...maps, ...contexts, ...adrs];
  return touched.length > 0 ? { format: 'grill-with-docs', kind: 'records', touched } : null;
}

/** The first format the patchset touches, in the fixed order, and its one specification. */
export async function detectSpec(patchset: Pick<Patchset, 'files'>, read: ReadHeadFile): Promise<Selection | null> {
  const paths = touchedPaths(patchset);
  return selectOpenSpec(paths) ?? selectKiro(paths) ?? (await selectBmad(paths, read)) ?? (await selectSuperpowers(paths, read)) ?? selectGrill(paths);
}

export async function safeRead(read: ReadHeadFile, path: string): Promise<string | null> {
  try {
    return await read(path);
  } catch {
    return null;
  }
}

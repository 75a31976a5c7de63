import { TestRepo } from '../../fixtures/gitRepo';

/** `n` numbered lines (`m1`…`mN`), each optionally replaced by the lines `change` gives for it. */
export const numberedLines = (prefix: string, n: number, change: (i: number) => string[] | null = () => null): string =>
  Array.from({ length: n }, (_, k) => change(k + 1) ?? [`${prefix}${k + 1}`])
    .flat()
    .join('\n') + '\n';

/**
 * The repository the forge tests serve. main: mod.txt (m1..m40), gone.txt, old-name.txt
 * (r1..r10). feature: mod.txt line 5 replaced (hunk -2,7 +2,7), line 30 replaced by two lines
 * (hunk -27,7 +27,8); added.txt (3 lines); gone.txt deleted; old-name.txt → new-name.txt with line
 * 10 changed. b1..b5: one commit each over main (to cross list pages). Options: `featureNext`
 * (one more commit over feature), `same` (a branch at main itself), `baseMoves` (main-next: one
 * unrelated commit over main; main-clash: main with mod.txt line 5 changed its own way, which
 * conflicts with feature). Checked out on main.
 */
export function forgeFixture(options: { featureNext?: boolean; same?: boolean; baseMoves?: boolean } = {}): TestRepo {
  const repo = new TestRepo();
  repo.write('mod.txt', numberedLines('m', 40)).write('gone.txt', 'g1\ng2\ng3\n').write('old-name.txt', numberedLines('r', 10));
  repo.commit('base');
  repo.branch('feature');
  repo.write(
    'mod.txt',
    numberedLines('m', 40, (i) => (i === 5 ? ['M5'] : i === 30 ? ['M30a', 'M30b'] : null)),
  );
  repo.write('added.txt', 'a1\na2\na3\n');
  repo.remove('gone.txt');
  repo.git('mv', 'old-name.txt', 'new-name.txt');
  repo.write(
    'new-name.txt',
    numberedLines('r', 10, (i) => (i === 10 ? ['R10'] : null)),
  );
  repo.commit('feature');
  if (options.featureNext) {
    repo.branch('feature-next');
    repo.write('later.txt', 'later\n').commit('later');
  }
  for (let i = 1; i <= 5; i++) {
    repo.checkout('main').branch(`b${i}`);
    repo.write(`b${i}.txt`, `${i}\n`).commit(`b${i}`);
  }
  repo.checkout('main');
  if (options.same) repo.branch('same').checkout('main');
  if (options.baseMoves) {
    repo.branch('main-next');
    repo.write('next.txt', 'next\n').commit('an unrelated change on main');
    repo.checkout('main').branch('main-clash');
    repo
      .write(
        'mod.txt',
        numberedLines('m', 40, (i) => (i === 5 ? ['m5 changed on main'] : null)),
      )
      .commit('main changes line 5');
    repo.checkout('main');
  }
  return repo;
}

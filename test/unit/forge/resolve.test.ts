import assert from 'node:assert/strict';
import { forgeRegistry, parseForgeEntries, parsePullRequestInput, parseRemoteUrl, redactUrl, resolveForge, sameRepository } from '../../../host/forge/resolve';
import { pullRequestKey, pullRequestLabel, pullRequestRefs } from '../../../protocol/forge';

describe('host/forge/resolve: which forge a remote names, and which request a reviewer pasted', () => {
  const registry = forgeRegistry([
    { host: 'ghe.example.com', provider: 'github' },
    { host: 'git.example.org', provider: 'gitlab', apiUrl: 'https://git.example.org/gitlab/api/v4' },
    { host: '127.0.0.1:8123', provider: 'github' },
  ]);

  it('parses every remote URL form git uses for a forge, dropping credentials', () => {
    const cases: Array<[string, { scheme: string; host: string; path: string } | null]> = [
      ['https://github.com/octo/hello.git', { scheme: 'https', host: 'github.com', path: 'octo/hello' }],
      ['https://x-access-token:SECRET@github.com/octo/hello', { scheme: 'https', host: 'github.com', path: 'octo/hello' }],
      ['git@github.com:octo/hello.git', { scheme: 'ssh', host: 'github.com', path: 'octo/hello' }],
      ['ssh://git@GitLab.com:2222/group/sub/proj.git', { scheme: 'ssh', host: 'gitlab.com', path: 'group/sub/proj' }],
      ['http://127.0.0.1:8123/octo/hello.git/', { scheme: 'http', host: '127.0.0.1:8123', path: 'octo/hello' }],
      ['https://github.com/octo', null],
      ['https://github.com/octo/../hello', null],
      ['/srv/git/hello.git', null],
      ['file:///srv/git/hello.git', null],
      ['', null],
    ];
    for (const [url, want] of cases) assert.deepEqual(parseRemoteUrl(url), want, url);
    assert.equal(redactUrl('https://user:pw@github.com/o/r'), 'https://github.com/o/r');
  });

  it('resolves github.com, gitlab.com and registered hosts with their API roots', () => {
    const gh = resolveForge('git@github.com:octo/hello.git', registry);
    assert.deepEqual(gh, { ok: true, value: { provider: 'github', host: 'github.com', owner: 'octo', repo: 'hello', apiUrl: 'https://api.github.com', webUrl: 'https://github.com/octo/hello' } });
    const gl = resolveForge('https://gitlab.com/group/sub/proj.git', registry);
    assert.ok(gl.ok);
    assert.deepEqual([gl.value.owner, gl.value.repo, gl.value.apiUrl], ['group/sub', 'proj', 'https://gitlab.com/api/v4']);
    const ghe = resolveForge('ssh://git@ghe.example.com/team/svc.git', registry);
    assert.ok(ghe.ok);
    assert.equal(ghe.value.apiUrl, 'https://ghe.example.com/api/v3', 'an unstated apiUrl defaults to <scheme>://<host>/api/v3');
    const selfManaged = resolveForge('git@git.example.org:platform/api.git', registry);
    assert.ok(selfManaged.ok);
    assert.equal(selfManaged.value.apiUrl, 'https://git.example.org/gitlab/api/v4', 'a stated apiUrl wins');
    const fake = resolveForge('http://127.0.0.1:8123/octo/hello.git', registry);
    assert.ok(fake.ok);
    assert.deepEqual([fake.value.host, fake.value.apiUrl, fake.value.webUrl], ['127.0.0.1:8123', 'http://127.0.0.1:8123/api/v3', 'http://127.0.0.1:8123/octo/hello']);
  });

  it('refuses an unregistered host, never guessing github.com; and a GitHub path that is not owner/name', () => {
    const unknown = resolveForge('https://bitbucket.org/team/repo.git', registry);
    assert.equal(unknown.ok, false);
    assert.ok(!unknown.ok && unknown.reason === 'unknown-host');
    assert.match(!unknown.ok ? unknown.message : '', /bitbucket\.org is not a registered forge: .*rennet\.forges/);
    const deep = resolveForge('https://github.com/a/b/c', registry);
    assert.ok(!deep.ok && deep.reason === 'unparsable-remote');
    const garbage = resolveForge('not a url', registry);
    assert.ok(!garbage.ok && garbage.reason === 'unparsable-remote');
  });

  it('reads RENNET_FORGES / rennet.forges as JSON, naming what is wrong; a user entry overrides a known host', () => {
    assert.deepEqual(parseForgeEntries('', 'RENNET_FORGES'), { ok: true, value: [] });
    assert.deepEqual(parseForgeEntries('[{"host":"Git.Example.org","provider":"gitlab"}]', 'RENNET_FORGES'), { ok: true, value: [{ host: 'git.example.org', provider: 'gitlab' }] });
    const bad = parseForgeEntries('[{"host":"x","provider":"bitbucket"}]', 'RENNET_FORGES');
    assert.ok(!bad.ok && /RENNET_FORGES is not a list of .*0\.provider/.test(bad.message), JSON.stringify(bad));
    assert.ok(!parseForgeEntries('{', 'rennet.forges').ok);
    const extra = parseForgeEntries([{ host: 'h', provider: 'github', token: 'x' }], 'rennet.forges');
    assert.ok(!extra.ok, 'an unknown key (a token pasted into settings) is refused, not kept');
    const overridden = forgeRegistry([{ host: 'github.com', provider: 'github', apiUrl: 'http://127.0.0.1:9/api/v3' }]);
    const r = resolveForge('https://github.com/o/r', overridden);
    assert.ok(r.ok && r.value.apiUrl === 'http://127.0.0.1:9/api/v3');
  });

  it('reads a pasted request: a number, #n, !n, or the URL of a pull or merge request on a registered forge', () => {
    assert.deepEqual(parsePullRequestInput(' #12 ', registry), { ok: true, value: { number: 12, repo: null } });
    assert.deepEqual(parsePullRequestInput('!7', registry), { ok: true, value: { number: 7, repo: null } });
    assert.deepEqual(parsePullRequestInput('https://github.com/octo/hello/pull/12/files', registry), {
      ok: true,
      value: { number: 12, repo: { provider: 'github', host: 'github.com', owner: 'octo', repo: 'hello' } },
    });
    assert.deepEqual(parsePullRequestInput('https://gitlab.com/group/sub/proj/-/merge_requests/7', registry), {
      ok: true,
      value: { number: 7, repo: { provider: 'gitlab', host: 'gitlab.com', owner: 'group/sub', repo: 'proj' } },
    });
    for (const bad of ['0', 'twelve', 'https://github.com/octo/hello/issues/12', 'https://example.com/o/r/pull/1', 'ftp://github.com/o/r/pull/1']) {
      assert.equal(parsePullRequestInput(bad, registry).ok, false, bad);
    }
    assert.ok(sameRepository({ provider: 'github', host: 'GitHub.com', owner: 'Octo', repo: 'Hello' }, { provider: 'github', host: 'github.com', owner: 'octo', repo: 'hello' }));
  });

  it('names a request per provider, keys it by identity, and keeps it under hidden refs git accepts', () => {
    const ref = { provider: 'github' as const, host: '127.0.0.1:8123', owner: '.github', repo: 'x', number: 4 };
    assert.equal(pullRequestKey(ref), 'github:127.0.0.1:8123/.github/x#4');
    assert.equal(pullRequestLabel(ref), 'Pull Request #4');
    assert.equal(pullRequestLabel({ provider: 'gitlab', number: 7 }), 'Merge Request !7');
    const refs = pullRequestRefs(ref);
    assert.match(refs.head, /^refs\/rennet\/pr\/github-[0-9a-f]{16}\/head$/);
    assert.notEqual(pullRequestRefs({ ...ref, owner: 'other' }).head, refs.head, 'another repository, another ref');
  });
});

import * as assert from 'node:assert/strict';
import type { PullRequestListResult } from '../../../protocol/rpc';
import {
  openPullRequestDetail,
  polishWords,
  forgeRepair,
  githubAuthProvider,
  gitlabTokenKey,
  isForgeHost,
  isForgeLink,
  unlinkableUrl,
  parseAuthTokenParams,
  pullRequestPicks,
  pullRequestPlaceholder,
} from '../../../extension/forgePlan';

const target = (number: number, provider: 'github' | 'gitlab' = 'github') => ({
  kind: 'pull-request' as const,
  provider,
  host: provider === 'github' ? 'github.com' : 'gitlab.com',
  owner: 'acme',
  repo: 'widgets',
  number,
});

function list(over: Partial<PullRequestListResult> = {}): PullRequestListResult {
  return {
    repo: { provider: 'github', host: 'github.com', owner: 'acme', repo: 'widgets', webUrl: 'https://github.com/acme/widgets' },
    viewer: 'sam',
    open: [
      { number: 12, title: 'Retry the flaky fetch', author: 'dana', headRef: 'retry', baseRef: 'main', draft: false, webUrl: 'https://github.com/acme/widgets/pull/12', target: target(12) },
      { number: 15, title: 'WIP: new cache', author: 'sam', headRef: 'cache', baseRef: 'main', draft: true, webUrl: 'https://github.com/acme/widgets/pull/15', target: target(15) },
    ],
    ...over,
  };
}

describe('extension/forgePlan', () => {
  it('the Review Pull Request picker: #n title, author · head → base, draft and yours; then the paste row', () => {
    const picks = pullRequestPicks(list());
    assert.deepEqual(
      picks.map((p) => [p.pick, p.label, p.description, p.detail]),
      [
        ['request', '#12 Retry the flaky fetch', 'dana · retry → main', undefined],
        ['request', '#15 WIP: new cache', 'sam · cache → main', 'Draft · Yours: its review continues in rounds, not in an approving review'],
        ['paste', 'Paste a number or URL…', 'any request of acme/widgets', undefined],
      ],
    );
    assert.deepEqual(picks[0]!.pick === 'request' ? picks[0]!.target : null, target(12));
    assert.equal(picks[2]!.alwaysShow, true);
  });

  it('GitLab requests are !n; the placeholder counts and names the repository', () => {
    const gitlab = list({
      repo: { provider: 'gitlab', host: 'gitlab.com', owner: 'group/sub', repo: 'widgets', webUrl: 'https://gitlab.com/group/sub/widgets' },
      open: [
        { number: 7, title: 'Fix', author: 'dana', headRef: 'fix', baseRef: 'main', draft: false, webUrl: 'https://gitlab.com/group/sub/widgets/-/merge_requests/7', target: target(7, 'gitlab') },
      ],
    });
    assert.equal(pullRequestPicks(gitlab)[0]!.label, '!7 Fix');
    assert.equal(pullRequestPlaceholder(gitlab), '1 open merge request on group/sub/widgets on gitlab.com: pick one to review, or paste a number or URL');
    assert.equal(pullRequestPlaceholder(list({ open: [] })), 'No open pull requests on acme/widgets on github.com: paste a number or URL');
  });

  it('a hostile title renders as text in the picker (no icon, no link)', () => {
    const hostile = list({ open: [{ ...list().open[0]!, title: '$(zap) [x](command:rennet.restartHost)\u202E', author: '$(alert)' }] });
    const row = pullRequestPicks(hostile)[0]!;
    assert.doesNotMatch(row.label, /\$\(|\]\(/);
    assert.match(row.label, /\\u202E/);
    assert.doesNotMatch(row.description ?? '', /\$\(/);
  });

  it('GitLab tokens are kept per host; hosts are what rennet.forges takes', () => {
    assert.equal(gitlabTokenKey('GitLab.Example.com'), 'rennet.gitlabToken/gitlab.example.com');
    assert.equal(gitlabTokenKey('127.0.0.1:8080'), 'rennet.gitlabToken/127.0.0.1:8080');
    assert.ok(isForgeHost('gitlab.com') && isForgeHost('127.0.0.1:8080'));
    assert.ok(!isForgeHost('https://gitlab.com') && !isForgeHost('gitlab.com/x') && !isForgeHost(''));
  });

  it('a GitHub sign-in is github for github.com, github-enterprise only for the server its setting names', () => {
    assert.equal(githubAuthProvider('github.com', undefined), 'github');
    assert.equal(githubAuthProvider('GitHub.com', 'https://ghe.example.com'), 'github');
    assert.equal(githubAuthProvider('ghe.example.com', 'https://ghe.example.com/'), 'github-enterprise');
    assert.equal(githubAuthProvider('ghe.example.com:8443', 'https://ghe.example.com:8443'), 'github-enterprise');
    assert.equal(githubAuthProvider('evil.example.com', 'https://ghe.example.com'), null, 'a sign-in is never handed to another server');
    assert.equal(githubAuthProvider('ghe.example.com', undefined), null);
    assert.equal(githubAuthProvider('ghe.example.com', 'not a url'), null);
  });

  it('token requests from the host are checked', () => {
    assert.deepEqual(parseAuthTokenParams({ provider: 'gitlab', host: 'GitLab.com' }), { provider: 'gitlab', host: 'gitlab.com' });
    assert.equal(parseAuthTokenParams({ provider: 'bitbucket', host: 'x.org' }), null);
    assert.equal(parseAuthTokenParams({ provider: 'github', host: 'https://github.com' }), null);
    assert.equal(parseAuthTokenParams(null), null);
  });

  describe('repairs', () => {
    it('missing credentials: the forge the host just asked for, else the one the message names', () => {
      const unauthorized = { code: 'forge-unauthorized' as const, message: 'no GitLab credentials for git.example.com: run "Rennet: Set GitLab Token", …' };
      assert.deepEqual(forgeRepair(unauthorized, null), { kind: 'set-gitlab-token', host: 'git.example.com', label: 'Set GitLab Token' });
      assert.deepEqual(forgeRepair(unauthorized, { provider: 'github', host: 'github.com' }), { kind: 'sign-in-github', host: 'github.com', label: 'Sign in to GitHub' });
      assert.deepEqual(forgeRepair({ code: 'forge-unauthorized', message: 'listing the open requests: Bad credentials' }, null), {
        kind: 'sign-in-github',
        host: 'github.com',
        label: 'Sign in to GitHub',
      });
    });

    it('an unregistered forge opens the setting; a moved head offers Capture New Head; others have none', () => {
      assert.equal(
        forgeRepair({ code: 'invalid-request', message: 'git.example.com is not a registered forge: github.com and gitlab.com are known; register others in rennet.forges' }, null)?.kind,
        'forge-settings',
      );
      assert.equal(forgeRepair({ code: 'invalid-request', message: 'rennet.forges is not a list of {host, provider}' }, null)?.kind, 'forge-settings');
      assert.equal(forgeRepair({ code: 'invalid-request', message: 'this repository has no remote, so there is no forge to reach' }, null), null);
      assert.equal(forgeRepair({ code: 'head-moved', message: 'moved' }, null)?.kind, 'capture-new-head');
      assert.equal(forgeRepair({ code: 'forge-failed', message: 'timeout' }, null), null);
    });
  });

  it('only http(s) pages of the forge’s own host are opened', () => {
    assert.ok(isForgeLink('https://github.com/acme/widgets/pull/12#pullrequestreview-1', 'github.com'));
    assert.ok(isForgeLink('http://127.0.0.1:8080/acme/widgets/pull/1', '127.0.0.1:8080'));
    assert.ok(!isForgeLink('https://evil.example/acme', 'github.com'));
    assert.ok(!isForgeLink('https://github.com.evil.example/x', 'github.com'));
    assert.ok(!isForgeLink('https://user:pw@github.com/x', 'github.com'));
    assert.ok(!isForgeLink('command:rennet.restartHost', 'github.com'));
    assert.ok(!isForgeLink('javascript:alert(1)', 'github.com'));
    assert.ok(!isForgeLink('file:///etc/passwd', 'github.com'));
    assert.ok(!isForgeLink('http://127.0.0.1:9090/x', '127.0.0.1:8080'));
    assert.ok(!isForgeLink('not a url', 'github.com'));
  });

  it('a forge’s answer to Open Pull Request is opened only as a page of the destination’s host (openPullRequest.ts)', () => {
    // The destination is host:port for a forge on a port; the answer must be that very host.
    assert.ok(isForgeLink('http://127.0.0.1:8080/acme/widgets/pull/3', '127.0.0.1:8080'));
    assert.ok(isForgeLink('https://gitlab.example/grp/widgets/-/merge_requests/1', 'GitLab.example'));
    for (const hostile of [
      'command:workbench.action.terminal.new',
      'javascript:fetch(1)',
      'vscode://rennet.rennet/x',
      'file:///etc/passwd',
      'http://127.0.0.1:8081/acme/widgets/pull/3',
      'http://127.0.0.1:8080@evil.example/pull/3',
      'https://127.0.0.1:8080.evil.example/pull/3',
      ' http://evil.example/',
      '//evil.example/pull/3',
    ]) {
      assert.ok(!isForgeLink(hostile, '127.0.0.1:8080'), hostile);
    }
  });

  it('a refused URL is logged quoted and defanged: no scheme, domain or address the Output view could link', () => {
    assert.equal(unlinkableUrl('https://evil.example/x?a=b'), '“hxxps[:]//evil[.]example/x?a=b”');
    assert.equal(unlinkableUrl('http://127.0.0.1:8080/x'), '“hxxp[:]//127[.]0[.]0[.]1:8080/x”');
    assert.equal(unlinkableUrl('command:workbench.action.terminal.new'), '“command[:]workbench[.]action[.]terminal[.]new”');
    assert.equal(unlinkableUrl('javascript:alert(1)'), '“javascript[:]alert(1)”');
    // A second URL inside the text, a line break that would forge a log line, a bidi override.
    const hostile = unlinkableUrl('x\n[info] https://evil.example/\u202Egpj.exe');
    assert.equal(hostile, '“x\\n[info] hxxps[:]//evil[.]example/\\u202Egpj[.]exe”');
    for (const u of ['https://evil.example/x', 'HTTP://A.B/', 'file:///etc/passwd', 'www.evil.example', 'mailto:a@b.c', 'x https://a.b y']) {
      const shown = unlinkableUrl(u);
      assert.ok(!/[a-z][a-z0-9+.-]*:\/\/|[a-z0-9]\.[a-z0-9]|[a-z]+:[^\]]/i.test(shown.slice(1, -1)), `${u} → ${shown}`);
    }
  });

  it('the Open Pull Request modal: real line breaks between its parts and inside the description; hostile text stays text', () => {
    const preview = {
      compositionId: 'c'.repeat(64),
      provider: 'github' as const,
      destination: { host: 'github.com', owner: 'acme', repo: 'widgets', remote: 'origin', webUrl: 'https://github.com/acme/widgets' },
      branch: 'feat/x',
      base: 'main',
      title: 'Retry [run](command:workbench.action.terminal.new)',
      body: 'First line.\n\n- a C:\\path\n- $(terminal) icon',
      sources: ['commits', 'model'],
      polish: { state: 'polished' as const, harness: 'openai-compatible', model: 'm', evidenceId: 'e'.repeat(64), reused: true },
      existing: null,
    };
    const text = String(openPullRequestDetail(preview));
    const parts = text.split('\n\n');
    assert.equal(parts[0], 'Pushes feat/x to acme/widgets on github.com (remote origin) and opens a request feat/x → main with this title and description:');
    assert.ok(!text.includes('\\n'), `a line break is written as an escape: ${JSON.stringify(text)}`);
    assert.ok(text.includes('First line.\n\n- a C:'), 'the description keeps its own line breaks');
    assert.ok(!text.includes('[run](command:'), 'link syntax is split');
    assert.ok(!text.includes('$(terminal)'), 'icon syntax is split');
    assert.equal(parts.at(-1), "Title and description written by openai-compatible (m) from the branch's review, as before: nothing it read has changed.");
    assert.equal(polishWords({ state: 'off', reason: 'no harness' }), 'Drafted without a model: no harness.');
    assert.equal(
      polishWords({ state: 'failed', harness: 'openai-compatible', model: null, message: 'timed out' }),
      "The model's pass did not finish (timed out): this is the draft from the commits and the review boards.",
    );
  });
});

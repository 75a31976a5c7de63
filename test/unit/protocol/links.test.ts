import * as assert from 'node:assert/strict';
import { inertLinkNote, inertLinkReason, isPrivateNetworkHost } from '../../../protocol/links';

/** Links to this machine or a private network, each written as a model might write it. */
const PRIVATE: readonly string[] = [
  'http://127.0.0.1:9/x',
  'http://localhost:3000',
  'http://LOCALHOST.',
  'http://foo.localhost/',
  'http://[::1]/',
  'http://[::ffff:127.0.0.1]/',
  'http://0x7f.1/',
  'http://2130706433/',
  'http://0/',
  'http://10.1.2.3',
  'http://172.16.0.1',
  'http://172.31.255.255',
  'http://192.168.1.1',
  'http://169.254.169.254/latest/meta-data',
  'http://100.64.0.1',
  'http://[fd00::1]/',
  'http://[fe80::1]/',
  'http://router/',
  'http://printer.local/',
  'http://svc.internal/',
  'https://user:pass@127.0.0.1/',
  // Whitespace around the target and control characters inside its scheme.
  '  http://127.0.0.1  ',
  '\thttp://127.0.0.1\n',
  'ht\ttp://127.0.0.1/',
  'h\nttp://127.0.0.1/',
  'htt p://127.0.0.1/',
  'http\r\n://localhost/',
  // Other spellings the URL parser normalises to one of the above.
  'HTTP://127.1',
  'http://0.0.0.0/',
  'http://[::]/',
  'http://[0:0:0:0:0:ffff:7f00:1]/',
  'http://[::127.0.0.1]/',
  'http://[64:ff9b::7f00:1]/',
  'http://[64:ff9b::a9fe:a9fe]/',
  'http://[::ffff:a9fe:a9fe]/',
  'http:127.0.0.1',
  'http:/localhost',
  'http://127.0.0.1%2e/',
  'http://ⓛocalhost/',
];

/** Links that stay live. */
const LIVE: readonly string[] = [
  'https://example.com/x',
  'http://172.32.0.1',
  'http://172.15.255.255',
  'http://11.0.0.1',
  'http://192.169.0.1',
  'http://100.128.0.1',
  'http://169.253.0.1',
  'http://[2001:db8::1]/',
  'mailto:a@b.c',
  '#frag',
  'https://github.com/o/r/pull/1',
  'https://localhost.example.com/',
];

const UNPARSABLE: readonly string[] = ['http://[::1', 'http://', 'https://'];

describe('protocol/links', () => {
  it('makes every link to this machine or a private network inert', () => {
    for (const href of PRIVATE) assert.equal(inertLinkReason(href), 'private-network', JSON.stringify(href));
  });

  it('leaves public http(s), mailto and in-page links live', () => {
    for (const href of LIVE) assert.equal(inertLinkReason(href), null, JSON.stringify(href));
  });

  it('makes an http(s) target the URL parser refuses inert', () => {
    for (const href of UNPARSABLE) assert.equal(inertLinkReason(href), 'unparsable', JSON.stringify(href));
  });

  it('does not judge other schemes or relative targets (each renderer refuses those itself)', () => {
    for (const href of ['javascript:alert(1)', 'data:text/html,x', 'file:///etc/passwd', 'docs/a.md', '']) {
      assert.equal(inertLinkReason(href), null, JSON.stringify(href));
    }
  });

  it('judges hostnames as the URL parser prints them', () => {
    for (const host of ['localhost', 'LOCALHOST.', '127.0.0.1', '[::1]', '[::ffff:7f00:1]', '10.0.0.1', 'nas', 'x.home.arpa', 'x.lan', '']) {
      assert.ok(isPrivateNetworkHost(host), host);
    }
    for (const host of ['example.com', '8.8.8.8', '[2606:4700::1111]', '256.1.1.1.example']) assert.ok(!isPrivateNetworkHost(host), host);
  });

  it('names why a link was not opened', () => {
    assert.equal(inertLinkNote('private-network'), 'not opened: it points at this machine or a private network');
    assert.equal(inertLinkNote('unparsable'), 'not opened: not a valid URL');
  });
});

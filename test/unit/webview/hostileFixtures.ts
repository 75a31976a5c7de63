/**
 * The hostile-board corpus (board.hostile.test.ts and the screenshot harness): markup, handlers,
 * script URLs, CSS escapes, megabyte strings and 200-deep nesting in every model-written field.
 */
import type { Lens, LensBoardView } from '../../../protocol';
import { boardView, codeRef, elements, type ElementInput } from './boardFixtures';

export const CANARY = 'window.__pwned = (window.__pwned || 0) + 1';

/** Markup, handlers and script URLs, as Markdown and as raw HTML. */
export const PAYLOADS: readonly string[] = [
  `<script>${CANARY}</script>`,
  `<img src=x onerror="${CANARY}">`,
  `<svg onload="${CANARY}"><circle/></svg>`,
  `<div onclick="${CANARY}" onmouseover="${CANARY}">hover</div>`,
  `<a href="javascript:${CANARY}">raw link</a>`,
  `<iframe srcdoc="<script>${CANARY}</script>"></iframe>`,
  `<style>@import url(https://evil.test/x.css); body{background:url(javascript:${CANARY})}</style>`,
  `<link rel=stylesheet href=https://evil.test/x.css>`,
  `<object data="data:text/html,<script>${CANARY}</script>"></object>`,
  `<details open ontoggle="${CANARY}">x</details>`,
  `[click me](javascript:${CANARY})`,
  `[upper](JAVASCRIPT:${CANARY})`,
  `[tab](java\tscript:${CANARY})`,
  `[entity](javascript&#58;${CANARY})`,
  `[encoded](&#106;avascript:${CANARY})`,
  `[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)`,
  `[vb](vbscript:msgbox(1))`,
  `[file](file:///etc/passwd)`,
  `<javascript:${CANARY}>`,
  `<data:text/html,<script>${CANARY}</script>>`,
  `[ref][evil]\n\n[evil]: javascript:${CANARY}`,
  `![img](data:image/png;base64,iVBORw0KGgo=)`,
  `![img](https://evil.test/pixel.png "title")`,
  `[ok](https://example.com/safe "fine")`,
  `[metadata](http://169.254.169.254/latest/meta-data)`,
  `[local](http://127.0.0.1:8080/rpc "local service")`,
  `[hex](http://0x7f.1/) [decimal](http://2130706433/) [v6](http://[::1]/) [lan](http://192.168.0.1/)`,
  `<http://localhost:3000/auto>`,
  `[ref local][lo]\n\n[lo]: http://localhost/x`,
  '\\3c script\\3e alert(1)\\3c /script\\3e',
  '</style><script>alert(1)</script>',
  'width: expression(alert(1)); background: url("javascript:alert(1)")',
  '"><img src=x onerror=alert(1)>',
  "'-alert(1)-'",
  '{{constructor.constructor("alert(1)")()}}',
  '\u202eevil\u202c src/retry.ts:3 \u0000 nul',
];

export const ONE_MB = 1 << 20;
export const deepList = Array.from({ length: 200 }, (_, i) => `${'  '.repeat(i)}- level ${i} <b onclick="${CANARY}">x</b> [j](javascript:x)`).join('\n');
export const deepQuote = `${'> '.repeat(200)}deep <script>${CANARY}</script>`;
export const deepOrdered = Array.from({ length: 200 }, (_, i) => `${'   '.repeat(i)}1. item ${i}`).join('\n');

export const hostileMarkdown = [...PAYLOADS, deepList, deepQuote, deepOrdered].join('\n\n');
export const hostileLine = PAYLOADS.join(' ');

export function hostileBoard(lens: Lens, big: boolean): LensBoardView {
  const evil = (suffix: string) => `${suffix} ${hostileLine}`;
  const inputs: ElementInput[] = [
    { id: 'h0" onmouseover="x', kind: 'stat', stat_labels: [evil('label'), 'plain'], stat_values: [evil('value')] },
    codeRef('h1', `javascript:${CANARY}`, 1, 2, { label: evil('label') }),
    codeRef('h2', '"><script>alert(1)</script>.ts', 3, 4, { side: 'base' }),
    { id: 'h3', kind: 'section', title: evil('section'), body_markdown: hostileMarkdown, source_paths: ['javascript:alert(1)', '<img src=x onerror=alert(1)>'], delta: null },
    { id: 'h4', kind: 'prose', parent: 'h3', markdown: hostileMarkdown },
    {
      id: 'h5',
      kind: 'finding',
      parent: 'h3',
      severity: 'major',
      category: 'security',
      title: evil('claim'),
      body_markdown: hostileMarkdown,
      part_titles: [evil('part')],
      part_bodies: [hostileMarkdown],
      remedy_markdown: hostileMarkdown,
      anchor: ['h1', 'h2', 'missing" onclick="x'],
      status: 'open',
      concurrence: [{ model: `<script>${CANARY}</script>`, agree: 1, total: 1 }],
      accord: 'concur',
      author: `<img src=x onerror="${CANARY}">`,
    },
    {
      id: 'h6',
      kind: 'decision',
      parent: 'h3',
      title: evil('decision'),
      statement: evil('statement'),
      rationale: evil('rationale'),
      alternatives: PAYLOADS.slice(0, 8),
      evidence: ['h1', 'h2'],
      inferred: true,
      source_path: `javascript:${CANARY}`,
    },
    { id: 'h7', kind: 'order_step', parent: 'h3', title: evil('step'), explanation_markdown: hostileMarkdown, span: 'h1' },
    { id: 'h8', kind: 'callout', parent: 'h3', tone: 'warning', markdown: hostileMarkdown },
    {
      id: 'h9',
      kind: 'requirement',
      parent: 'h3',
      title: evil('requirement'),
      shall: evil('shall'),
      source_path: `javascript:${CANARY}`,
      source_line: 3,
      source_candidate: evil('candidate'),
      trace: ['h1'],
      related_files: ['data:text/html,x'],
      spec_delta: 'added',
    },
    { id: 'h10', kind: 'scenario', parent: 'h9', name: evil('scenario'), text_markdown: `- **WHEN** ${hostileLine}\n- **THEN** <script>${CANARY}</script>` },
    { id: 'h11', kind: 'scenario', parent: 'h9', name: evil('scenario'), text_markdown: hostileMarkdown, scenario_condition: evil('when'), scenario_response: evil('then') },
    { id: 'h12', kind: 'task', parent: 'h3', text: evil('task'), done: true, source_path: '<script>x</script>' },
    { id: 'h13', kind: 'noise_group', parent: 'h3', title: evil('group'), reason: evil('reason') },
    { id: 'h14', kind: 'noise_member', parent: 'h13', path: `javascript:${CANARY}`, side: 'head', start_line: 1, end_line: 2, hunk_id: 'x', verdict: 'noise', judge: 'deterministic' },
    { id: 'h15', kind: 'round_outcome', parent: 'h3', ask_id: '<script>x</script>', outcome: 'partial', note: hostileMarkdown, evidence: ['h2'] },
    { id: 'h16', kind: 'noise_group', title: evil('top group'), reason: hostileMarkdown },
  ];
  if (big) {
    inputs.push({ id: 'big1', kind: 'prose', markdown: 'x'.repeat(ONE_MB) });
    inputs.push({ id: 'big2', kind: 'prose', markdown: '['.repeat(ONE_MB) });
    inputs.push({ id: 'big3', kind: 'section', parent: 'h3', title: `${'<script>'.repeat(ONE_MB / 8)}`, body_markdown: `${'<img src=x onerror=alert(1)> '.repeat(ONE_MB / 29)}`, delta: null });
    inputs.push({ id: 'big4', kind: 'callout', tone: 'note', markdown: `${'src/a.ts:1 [j](javascript:x) '.repeat(2048)}` });
  }
  // 200-deep nesting of elements as well as of Markdown.
  for (let i = 0; i < 200; i++) {
    inputs.push({ id: `n${i}`, kind: 'section', parent: i === 0 ? 'h3' : `n${i - 1}`, title: `nested ${i} <script>${CANARY}</script>`, body_markdown: `[x](javascript:${CANARY}) ${i}`, delta: null });
  }
  const view = boardView(lens, elements(inputs), { title: evil('title'), intro: hostileMarkdown });
  return view;
}

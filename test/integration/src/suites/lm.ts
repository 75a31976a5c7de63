// The vscode-lm harness end to end in a real extension host: Rennet's host runs a Sequence seat
// whose model is the scripted provider of ../lmProvider.ts, reached through vscode.lm exactly as a
// real provider would be (host → rennet/lm/chat → extension → lm.selectChatModels →
// model.sendRequest → provider), and the board settles through the host's real board writer.
// The fixture's checkout is on main while these suites draft (restored to feature after): the read
// tools' results must carry lines only the reviewed head has, which no file in the checkout holds.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { RennetApi } from '../../../../extension/api';
import type { HarnessReport } from '../../../../extension/commands/showHarnesses';
import type { ReportBoard } from '../../../../protocol/review';
import { MODELS, observed, SCRIPTED_VENDOR, setScript, type ScriptedRound } from '../lmProvider';
import type { SuiteContext } from './index';
import { FEATURE_BRANCH, rennetApi, SEQUENCE_SCRIPT, unwrap } from './support';

/**
 * The shared Sequence script, its first response also saying something and calling a tool the seat
 * does not have (the host answers with an error result and goes on).
 */
const SEQUENCE_SCRIPT_WITH_A_STRAY_CALL: ScriptedRound[] = SEQUENCE_SCRIPT.map((round, i) =>
  i === 0
    ? {
        text: 'Reading the change.',
        calls: [
          ...(round.calls ?? []),
          { name: 'delete_repository', input: {} },
          // A vscode.lm seat reads the change through the host's read tools, like every seat.
          { name: 'read_diff', input: { path: 'src/app.js' } },
          { name: 'read_file', input: { path: 'src/app.js', side: 'head', start_line: 5, end_line: 5 } },
          // A file only the reviewed head has: the checkout (main) has no such file at all.
          { name: 'read_file', input: { path: 'src/new feature.js', side: 'head', start_line: 1, end_line: 2 } },
        ],
      }
    : round,
);

function field(el: Record<string, unknown>, name: string): unknown {
  return el[name];
}

/** git in the fixture repository, with an argv (never a shell). */
function git(repo: string, ...args: string[]): string {
  return execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** The reviewed head's line 5 of src/app.js: the checkout on main has `app line 5` there. */
const HEAD_ONLY_LINE = 'app line 5 (changed)';

export function registerLmSuites(ctx: SuiteContext): void {
  describe('vscode-lm harness (scripted vscode.lm provider)', () => {
    let api: RennetApi;
    let sessionId = '';

    before(async () => {
      api = await rennetApi();
      assert.ok(ctx.fixtureRepo, 'the runner gave no fixture repository');
      sessionId = unwrap(await api.openReview(ctx.fixtureRepo, FEATURE_BRANCH), 'openReview').sessionId;
      // The reviewed branch is NOT checked out while the seat reads: a read of the working tree would show main.
      git(ctx.fixtureRepo, 'checkout', '-q', 'main');
    });
    after(() => {
      // The suites after these expect the fixture as the runner made it: feature checked out.
      if (ctx.fixtureRepo) git(ctx.fixtureRepo, 'checkout', '-q', 'feature');
    });

    it('VS Code lists the scripted provider’s models to any extension (lm.selectChatModels)', async () => {
      const models = await vscode.lm.selectChatModels({ vendor: SCRIPTED_VENDOR });
      assert.deepEqual(models.map((m) => m.id).sort(), [MODELS.refuser.id, MODELS.drafter.id].sort(), `models: ${models.map((m) => `${m.vendor}/${m.id}`).join(', ') || 'none'}`);
    });

    it('drafts a Sequence board with the scripted model; it settles through the host’s board writer', async () => {
      assert.equal(git(ctx.fixtureRepo, 'rev-parse', '--abbrev-ref', 'HEAD'), 'main', 'the checkout is not on main while the seat drafts');
      assert.ok(!readFileSync(join(ctx.fixtureRepo, 'src/app.js'), 'utf8').includes(HEAD_ONLY_LINE), 'the checkout holds the reviewed head’s line');
      assert.ok(!existsSync(join(ctx.fixtureRepo, 'src/new feature.js')), 'the checkout holds the file only the reviewed head has');
      setScript(SEQUENCE_SCRIPT_WITH_A_STRAY_CALL);
      const drafted = unwrap(await api.draftLens(sessionId, 'sequence', { vendor: SCRIPTED_VENDOR, family: MODELS.drafter.family }), 'draftLens(sequence)');
      assert.equal(drafted.model.vendor, SCRIPTED_VENDOR);
      assert.equal(drafted.model.id, MODELS.drafter.id);

      const boards = new Map(drafted.report.boards.map((b) => [b.lens, b] as const));
      const sequence = boards.get('sequence') as ReportBoard;
      assert.ok(sequence, 'the report has no Sequence board');
      assert.equal(sequence.state, 'settled', `Sequence did not settle: ${JSON.stringify(sequence.failure)}`);
      assert.equal(sequence.document.title, 'The feature branch in reading order');
      assert.match(sequence.document.introMarkdown, /new feature file/);
      const kinds = sequence.elements.map((e) => e.kind).sort();
      assert.deepEqual(kinds, ['code_ref', 'code_ref', 'order_step', 'order_step', 'section'], `elements: ${JSON.stringify(sequence.elements)}`);
      const section = sequence.elements.find((e) => e.kind === 'section');
      assert.ok(section);
      assert.equal(field(section, 'title'), 'Reading order');
      const steps = sequence.elements.filter((e) => e.kind === 'order_step');
      assert.deepEqual(
        steps.map((s) => field(s, 'title')),
        ['app.js changes line 5', 'The new feature file'],
      );
      for (const step of steps) assert.equal(step.parent, section.id, `step ${step.id} is not under the section`);
      const refs = sequence.elements.filter((e) => e.kind === 'code_ref');
      assert.deepEqual(refs.map((r) => field(r, 'path')).sort(), ['src/app.js', 'src/new feature.js']);
      assert.deepEqual(
        steps.map((s) => field(s, 'span')),
        refs.map((r) => r.id),
        'each step spans the code_ref its round cited',
      );

      // Only Sequence had a harness: every other model lane says why it did not draft.
      for (const lens of ['decisions', 'flagged'] as const) {
        const board = boards.get(lens);
        assert.equal(board?.state, 'failed', `${lens}: ${JSON.stringify(board)}`);
        assert.match(board?.failure?.message ?? '', /only the Sequence lens with vscode-lm/);
      }

      // Spend: one turn of the vscode-lm harness, with the model that answered, and no usage (vscode.lm reports none).
      const spend = drafted.report.spend.filter((s) => s.lens === 'sequence');
      assert.equal(spend.length, 1, JSON.stringify(drafted.report.spend));
      assert.equal(spend[0]?.harness, 'vscode-lm');
      assert.equal(spend[0]?.model, `${SCRIPTED_VENDOR}/${MODELS.drafter.id}`);
      assert.equal(spend[0]?.inputTokens, null);
      assert.equal(spend[0]?.outputTokens, null);
      assert.equal(spend[0]?.refusals, 0, 'the board refused a call the script meant to land');
    });

    it('the provider saw the seat’s tools, the transcript, and the host’s tool results (errors marked)', () => {
      assert.deepEqual(
        observed.map((o) => o.round),
        [0, 1, 2, 3],
        `rounds: ${JSON.stringify(observed.map((o) => o.round))}`,
      );
      assert.ok(observed.every((o) => o.modelId === MODELS.drafter.id));
      for (const name of ['set_document', 'cite', 'add_section', 'add_order_step', 'finish']) {
        assert.ok(observed[0]?.tools.includes(name), `the seat's tool ${name} was not offered: ${observed[0]?.tools.join(', ')}`);
      }
      assert.ok(!observed[0]?.tools.includes('delete_repository'));
      assert.match(observed[0]?.firstUserText ?? '', /\S/, 'the first request carried no prompt');
      assert.deepEqual(observed[3]?.roles, ['user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user']);
      const results = observed[3]?.results ?? {};
      assert.equal(Object.keys(results).length, 11, JSON.stringify(results));
      for (const name of ['list_changes', 'read_diff', 'read_file', 'search_code', 'read_context']) {
        assert.ok(observed[0]?.tools.includes(name), `the read tool ${name} was not offered: ${observed[0]?.tools.join(', ')}`);
      }
      // The checkout was on main: these lines came from the reviewed head's capture, not the working tree.
      assert.match(results['r0-4'] ?? '', /^\+ +5 \| app line 5 \(changed\)$/m, `read_diff answered: ${results['r0-4']}`);
      assert.match(results['r0-5'] ?? '', /^5\| app line 5 \(changed\)$/m, `read_file answered: ${results['r0-5']}`);
      assert.match(results['r0-6'] ?? '', /^src\/new feature\.js at the head, lines 1–2 of 12:\n1\| feature line 1\n2\| feature line 2$/m, `read_file of the added file answered: ${results['r0-6']}`);
      assert.match(results['r0-1-c1'] ?? '', /\be\d+\b/, 'cite answered no id');
      assert.match(results['r0-3'] ?? '', /^Error: There is no tool named "delete_repository"/);
      assert.match(results['r2-1'] ?? '', /settled/i, `finish answered: ${results['r2-1']}`);
    });

    it('a vendor with no model is refused as a clear state, before any seat runs', async () => {
      const result = await api.draftLens(sessionId, 'sequence', { vendor: 'rennet-nobody' });
      assert.equal(result.ok, false, 'a draft with no model was accepted');
      if (result.ok) return;
      assert.equal(result.error.code, 'not-found');
      assert.match(result.error.message, /no VS Code language model matches vendor "rennet-nobody"/);
    });

    it('a model whose provider denies consent fails the lane with a typed, worded failure', async () => {
      setScript([]);
      const drafted = unwrap(await api.draftLens(sessionId, 'sequence', { vendor: SCRIPTED_VENDOR, family: MODELS.refuser.family }), 'draftLens(refuser)');
      const sequence = drafted.report.boards.find((b) => b.lens === 'sequence');
      assert.equal(sequence?.state, 'failed', JSON.stringify(sequence));
      assert.match(sequence?.failure?.message ?? '', /consent denied/, `failure: ${sequence?.failure?.message}`);
      assert.ok(observed.length >= 1 && observed.every((o) => o.modelId === MODELS.refuser.id), 'the refuser was never asked');
    });

    it('“Rennet: Show Harnesses” lists the vscode.lm models, the CLI discovery and the HTTP APIs', async () => {
      const report = (await vscode.commands.executeCommand('rennet.showHarnesses')) as HarnessReport;
      assert.ok(report, 'the command returned no report');
      const ids = report.vscodeLm.models.map((m) => `${m.vendor}/${m.id}`);
      assert.ok(ids.includes(`${SCRIPTED_VENDOR}/${MODELS.drafter.id}`), `models: ${ids.join(', ')}`);
      assert.equal(report.cli.unavailable, null, `CLI discovery: ${report.cli.unavailable}`);
      assert.deepEqual(report.cli.harnesses.map((h) => h.kind).sort(), ['claude-code', 'codex']);
      for (const h of report.cli.harnesses) assert.ok(h.available || (h.reason ?? '').length > 0, `${h.kind} is unavailable without a reason`);
      assert.deepEqual(
        report.http.map((h) => h.provider),
        ['openai', 'anthropic'],
      );
      assert.equal(report.configured.default, 'auto');
    });

    it('“Rennet: Show Harnesses” probes the local model servers on their fixed loopback ports: an Ollama answering there is listed with its tool-capable model, an absent LM Studio as not running', async () => {
      // A server on Ollama's own port, speaking its API: the host's real probe (not a test seam) reaches it.
      const ollama: Server = createServer((req, res) => {
        res.setHeader('content-type', 'application/json');
        if (req.method === 'GET' && req.url === '/api/tags') {
          res.end(
            JSON.stringify({
              models: [
                { name: 'qwen3:8b', model: 'qwen3:8b' },
                { name: 'llama3:8b', model: 'llama3:8b' },
              ],
            }),
          );
        } else if (req.method === 'POST' && req.url === '/api/show') {
          let raw = '';
          req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
          req.on('end', () => res.end(JSON.stringify({ capabilities: (JSON.parse(raw) as { model: string }).model === 'qwen3:8b' ? ['completion', 'tools'] : ['completion'] })));
        } else {
          res.statusCode = 404;
          res.end('404 page not found');
        }
      });
      await new Promise<void>((resolve, reject) => {
        ollama.once('error', (error) => reject(new Error(`port 11434 is taken on this machine (${(error as Error).message}): the test needs Ollama's port free`)));
        ollama.listen(11434, '127.0.0.1', resolve);
      });
      try {
        const report = (await vscode.commands.executeCommand('rennet.showHarnesses')) as HarnessReport;
        assert.equal(report.local.unavailable, null, `local discovery: ${report.local.unavailable}`);
        const [o, lm] = report.local.servers;
        assert.deepEqual([o?.kind, o?.baseUrl, o?.status], ['ollama', 'http://127.0.0.1:11434', 'running'], JSON.stringify(o));
        assert.deepEqual(
          o?.models.map((m) => [m.name, m.tools]),
          [
            ['qwen3:8b', true],
            ['llama3:8b', false],
          ],
        );
        assert.deepEqual([lm?.kind, lm?.status], ['lm-studio', 'not-running'], JSON.stringify(lm));
      } finally {
        await new Promise<void>((resolve) => ollama.close(() => resolve()));
      }
    });
  });
}

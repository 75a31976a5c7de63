// Integration suites: they run inside a real VS Code extension host (code-server), next to the
// installed Rennet .vsix, and reach Rennet only through VS Code and its exported API.
// Registered after mocha's `pre-require` (see ../extension.ts), so describe/it are mocha's.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { RennetApi } from '../../../../extension/api';
import { registerCommentSuites } from './comments';
import { registerEditorSurfaceSuites } from './editorSurfaces';
import { registerLensSuites } from './lenses';
import { registerLmSuites } from './lm';
import { unwrap } from './support';

export interface SuiteContext {
  /** A git repository made by the runner: `feature` (checked out) and `main`. */
  fixtureRepo: string;
}

const RENNET_ID = 'rennet.rennet';
const EXPECTED_COMMANDS = ['rennet.reviewBranch', 'rennet.reviewWorkingTree', 'rennet.showBoard', 'rennet.restartHost', 'rennet.showHarnesses', 'rennet.setApiKey', 'rennet.draftBoards'];

function rennet(): vscode.Extension<RennetApi> {
  const ext = vscode.extensions.getExtension<RennetApi>(RENNET_ID);
  assert.ok(ext, `extension ${RENNET_ID} is not installed in this extension host`);
  return ext;
}

/** Editor tabs showing a Rennet board (the webview tab's viewType carries a prefix). */
function boardTabs(): vscode.Tab[] {
  return vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputWebview && t.input.viewType.endsWith('rennet.board'));
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function registerSuites(ctx: SuiteContext): void {
  describe('Rennet in a real extension host', () => {
    let api: RennetApi;

    describe('activation and commands', () => {
      it('is installed, not yet active (it activates on demand), and activates', async () => {
        const ext = rennet();
        assert.equal(ext.isActive, false, 'Rennet was already active before anything asked for it');
        api = await ext.activate();
        assert.equal(ext.isActive, true);
        assert.ok(api, 'activate() returned no API');
        for (const fn of ['hostInfo', 'hostStatus', 'openSessions', 'openReview', 'restartHost'] as const) {
          assert.equal(typeof api[fn], 'function', `the exported API lacks ${fn}()`);
        }
      });

      it('registers every command it contributes', async () => {
        const contributed = ((rennet().packageJSON.contributes?.commands ?? []) as { command: string }[]).map((c) => c.command);
        for (const id of EXPECTED_COMMANDS) assert.ok(contributed.includes(id), `package.json does not contribute ${id}`);
        const registered = new Set(await vscode.commands.getCommands(true));
        const missing = contributed.filter((id) => !registered.has(id));
        assert.deepEqual(missing, [], `contributed but not registered after activation: ${missing.join(', ')}`);
      });
    });

    describe('the sidecar host', () => {
      it('has not started after activation (it starts lazily)', () => {
        assert.equal(api.hostStatus(), null, `the host was started by activation: status ${JSON.stringify(api.hostStatus())}`);
      });

      it('starts on first use and answers hello from its own process', async () => {
        const info = await api.hostInfo();
        assert.equal(typeof info.version, 'string');
        assert.ok(info.version.length > 0, 'hello carries no version');
        assert.ok(Number.isInteger(info.pid) && info.pid > 0, `hello carries no pid: ${JSON.stringify(info)}`);
        assert.notEqual(info.pid, process.pid, 'the host answered from the extension host process, not a sidecar');
        assert.ok(processAlive(info.pid), `host pid ${info.pid} is not a live process`);
        assert.ok(info.storeDir.includes(RENNET_ID), `the store is not under Rennet's global storage: ${info.storeDir}`);
        assert.ok(Number.isInteger(info.storeSchema) && info.storeSchema > 0, `store schema: ${info.storeSchema}`);
        assert.equal(info.sessions, 0, 'a fresh profile should read back no sessions');
        assert.equal(api.hostStatus()?.state, 'running');
        const again = await api.hostInfo();
        assert.equal(again.pid, info.pid, 'a second hostInfo() started another host');
      });
    });

    describe('sessions', () => {
      const branch = { kind: 'branch', head: 'feature', base: 'main' } as const;
      let sessionId = '';

      it('opening the same target twice yields the same session (and one panel)', async () => {
        assert.ok(ctx.fixtureRepo, 'the runner gave no fixture repository');
        const first = unwrap(await api.openReview(ctx.fixtureRepo, branch), 'openReview(feature vs main)');
        assert.match(first.sessionId, /\S/, 'no session id');
        sessionId = first.sessionId;
        assert.equal(first.reattached, false, 'the first open of a target in a fresh store reattached');
        assert.equal(first.captured, true, 'the first open did not capture');
        const second = unwrap(await api.openReview(ctx.fixtureRepo, branch), 'second openReview(feature vs main)');
        assert.equal(second.sessionId, first.sessionId, 'the same target opened a second session');
        assert.equal(second.reattached, true, 'the second open did not say it reattached');
        assert.equal(second.captured, false, 'the second open captured again although nothing changed');
        assert.deepEqual(
          api.openSessions().filter((id) => id === first.sessionId),
          [first.sessionId],
          'not exactly one panel for the session',
        );
        // The window's tab model reaches the extension host asynchronously: give it a moment.
        let boards: vscode.Tab[] = [];
        for (let i = 0; i < 50; i++) {
          boards = boardTabs();
          if (boards.length) break;
          await new Promise((r) => setTimeout(r, 100));
        }
        assert.equal(boards.length, 1, `expected one board tab, found ${boards.map((t) => t.label).join(', ') || 'none'}`);
        assert.equal(boards[0]?.label, 'Rennet · feature vs main');
      });

      it('a different target gets a different session', async () => {
        const wt = unwrap(await api.openReview(ctx.fixtureRepo, { kind: 'working-tree', base: 'main' }), 'openReview(working tree vs main)');
        assert.notEqual(wt.sessionId, sessionId);
        assert.equal(api.openSessions().length, 2, `open sessions: ${api.openSessions().join(', ')}`);
      });

      it('a restarted host reads the sessions back and reattaches the same target', async () => {
        const before = await api.hostInfo();
        const after = await api.restartHost();
        assert.notEqual(after.pid, before.pid, 'restartHost() kept the same process');
        for (let i = 0; i < 50 && processAlive(before.pid); i++) await new Promise((r) => setTimeout(r, 100));
        assert.ok(!processAlive(before.pid), `the old host ${before.pid} is still running 5 s after the restart`);
        assert.equal(after.sessions, 2, `the restarted host read back ${after.sessions} sessions, expected 2`);
        const again = unwrap(await api.openReview(ctx.fixtureRepo, branch), 'openReview after restart');
        assert.equal(again.sessionId, sessionId, 'after a host restart the same target opened another session');
        assert.equal(again.reattached, true);
      });

      it('a host killed with SIGKILL is restarted by itself and reads the sessions back', async () => {
        const before = await api.hostInfo();
        process.kill(before.pid, 'SIGKILL');
        // The client notices the dead process, restarts it and says hello again: no user action.
        let after: Awaited<ReturnType<typeof api.hostInfo>> | undefined;
        const statuses = new Set<string>();
        for (let i = 0; i < 150; i++) {
          const status = api.hostStatus();
          if (status) statuses.add(status.state);
          if (status?.state === 'running') {
            const info = await api.hostInfo();
            if (info.pid !== before.pid) {
              after = info;
              break;
            }
          }
          await new Promise((r) => setTimeout(r, 100));
        }
        assert.ok(after, `no new host 15 s after SIGKILL of ${before.pid}; states seen: ${[...statuses].join(', ')}`);
        assert.equal(after.sessions, before.sessions, 'the restarted host did not read every session back');
        const again = unwrap(await api.openReview(ctx.fixtureRepo, branch), 'openReview after a crash');
        assert.equal(again.sessionId, sessionId, 'after a crash the same target opened another session');
      });
    });
  });

  // After the host-lifecycle suites: they need the host not started yet.
  registerLmSuites(ctx);
  // After the lm suites: their drafts are the frozen generations the lens suites expect.
  registerLensSuites(ctx);
  // After the lens suites: drafts its own generation of the same session and follows it in editors.
  registerEditorSurfaceSuites(ctx);
  // After the editor surfaces: stages, restarts the host and undoes in the same branch session, then a working-tree one.
  registerCommentSuites(ctx);
}

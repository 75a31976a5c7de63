import type { Page } from 'playwright-core';
import { EMPTY_ASK_PROJECTION } from '../../../host/asks/fold';
import type { SessionSnapshot } from '../../../protocol';
import type { FrameTiming, WaitSpec } from './probe';
import type { PanelServer } from './server';

/**
 * Driving the bench page from Node: open the panel as VS Code would (the app mounts, says ready,
 * gets the session snapshot), stage messages outside the timed window, and run the probe's timed
 * acts. Page errors are collected so a broken panel fails the bench instead of timing out quietly.
 */

export class BenchPanel {
  readonly errors: string[] = [];

  constructor(
    readonly page: Page,
    private readonly server: PanelServer,
  ) {
    page.on('pageerror', (error) => this.errors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error' || (message.type() === 'warning' && message.text().includes('[rennet]'))) {
        this.errors.push(message.text());
      }
    });
  }

  /** A fresh page: the panel mounted with `state` restored, `session` shown and an empty ask log, as after ready. */
  async open(session: SessionSnapshot, state?: unknown): Promise<void> {
    await this.page.goto(this.server.url(state));
    await this.page.waitForFunction(() => window.rennetBench?.posted().some((p) => (p.message as { type?: unknown }).type === 'rennet/panel/ready'));
    await this.deliver({ type: 'rennet/panel/snapshot', snapshot: session });
    await this.deliver({ type: 'rennet/panel/asks', projection: EMPTY_ASK_PROJECTION, undo: null });
    await this.until({ kind: 'present', selector: '[data-testid="patchset-header"]' });
    this.check();
  }

  // Messages cross into the page as JSON text (as they cross VS Code's process boundary); Playwright's
  // own serialization of a 1 MB object costs seconds per run and measures nothing of Rennet's.

  deliver(message: unknown): Promise<void> {
    return this.page.evaluate((json) => window.rennetBench.deliver(JSON.parse(json)), JSON.stringify(message));
  }

  stage(name: string, message: unknown): Promise<void> {
    return this.page.evaluate(([n, json]) => window.rennetBench.stage(n, JSON.parse(json)), [name, JSON.stringify(message)] as const);
  }

  until(wait: WaitSpec): Promise<void> {
    return this.page.evaluate((w) => window.rennetBench.until(w), wait);
  }

  post(name: string, wait: WaitSpec): Promise<FrameTiming> {
    return this.timed(this.page.evaluate(([n, w]) => window.rennetBench.post(n, w), [name, wait] as const));
  }

  /** Stage and post in one evaluate: for a message that has just arrived (the host's push). */
  stageAndPost(message: unknown, wait: WaitSpec): Promise<FrameTiming> {
    return this.timed(
      this.page.evaluate(
        ([json, w]) => {
          window.rennetBench.stage('arrived', JSON.parse(json));
          return window.rennetBench.post('arrived', w);
        },
        [JSON.stringify(message), wait] as const,
      ),
    );
  }

  click(selector: string, wait: WaitSpec): Promise<FrameTiming> {
    return this.timed(this.page.evaluate(([s, w]) => window.rennetBench.click(s, w), [selector, wait] as const));
  }

  jump(selector: string): Promise<FrameTiming> {
    return this.timed(this.page.evaluate((s) => window.rennetBench.jump(s), selector));
  }

  baselineRows(name: string): Promise<FrameTiming> {
    return this.timed(this.page.evaluate((n) => window.rennetBench.baselineRows(n), name));
  }

  baselineText(text: string): Promise<FrameTiming> {
    return this.timed(this.page.evaluate((t) => window.rennetBench.baselineText(t), text));
  }

  baselineClick(text: string): Promise<FrameTiming> {
    return this.timed(this.page.evaluate((t) => window.rennetBench.baselineClick(t), text));
  }

  scrollPage(to: 'end' | 'start', wait: WaitSpec): Promise<FrameTiming> {
    return this.timed(this.page.evaluate(([t, w]) => window.rennetBench.scrollPage(t, w), [to, wait] as const));
  }

  clearBaseline(): Promise<void> {
    return this.page.evaluate(() => window.rennetBench.clearBaseline());
  }

  /** The longest main-thread task since an act began (its FrameTiming's actEpochMs); 0 when none reached 50 ms. */
  longestTask(since: FrameTiming): Promise<number> {
    return this.page.evaluate((t) => window.rennetBench.longestTask(t), since.actEpochMs);
  }

  /** Throws what the page reported (an uncaught error, a dropped panel message). */
  check(): void {
    if (this.errors.length > 0) throw new Error(`the panel reported: ${this.errors.join(' | ')}`);
  }

  private async timed(run: Promise<FrameTiming>): Promise<FrameTiming> {
    const timing = await run;
    this.check();
    return timing;
  }
}

/**
 * Forges as the extension shows them, decided without VS Code: the secret key of a GitLab token,
 * which VS Code authentication provider holds a GitHub host's sign-in, the rows of the "Review Pull
 * Request" picker, the repair a forge refusal offers, and which links may be opened. Pure (no
 * `vscode` import): forges.ts and the commands map these answers onto VS Code, and
 * test/unit/extension/forgePlan.test.ts tests them.
 */
import { ForgeProvider } from '../protocol/exits';
import { ForgeEntry } from '../protocol/forge';
import type { RennetError } from '../protocol/result';
import type { OpenPullRequestPreview, PullRequestListResult, PullRequestSummary } from '../protocol/rpc';
import type { PullRequestTarget } from '../protocol/session';
import { escapeControls } from '../protocol/text';
import { ui, uiJoin, uiText, type UiPickItem, type UiText } from './uiText';

/** The SecretStorage key of the GitLab token for a host (`rennet.gitlabToken/gitlab.com`). */
export function gitlabTokenKey(host: string): string {
  return `rennet.gitlabToken/${host.trim().toLowerCase()}`;
}

/** A forge host as `rennet.forges` and the host name it (a port when the remote names one). */
export function isForgeHost(host: string): boolean {
  return ForgeEntry.shape.host.safeParse(host).success;
}

/**
 * The VS Code authentication provider that holds a GitHub host's sign-in: github.com is `github`;
 * every other host is GitHub Enterprise, whose provider serves ONE server (the
 * `github-enterprise.uri` setting). `enterpriseUri` is that setting; a host it does not name gets
 * no provider, so a sign-in to one server is never handed to another.
 */
export function githubAuthProvider(host: string, enterpriseUri: string | undefined): 'github' | 'github-enterprise' | null {
  const wanted = host.trim().toLowerCase();
  if (wanted === 'github.com') return 'github';
  if (!enterpriseUri) return null;
  try {
    return new URL(enterpriseUri).host.toLowerCase() === wanted ? 'github-enterprise' : null;
  } catch {
    return null;
  }
}

/** Checks what the host sends with `rennet/auth/token` (it names the forge the token is for). */
export function parseAuthTokenParams(raw: unknown): { provider: ForgeProvider; host: string } | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const { provider, host } = raw as { provider?: unknown; host?: unknown };
  const p = ForgeProvider.safeParse(provider);
  if (!p.success || typeof host !== 'string' || !isForgeHost(host)) return null;
  return { provider: p.data, host: host.toLowerCase() };
}

// ─── Review Pull Request ─────────────────────────────────────────────────────────────────────

export type PullRequestPick = UiPickItem & ({ pick: 'request'; target: PullRequestTarget } | { pick: 'paste' });

/** `#12` on GitHub, `!7` on GitLab. */
export function requestRef(provider: ForgeProvider, number: number): string {
  return provider === 'gitlab' ? `!${number}` : `#${number}`;
}

/**
 * The picker's rows: every open request (`#12 title`, `author · head → base`, then what else is
 * worth knowing: draft, yours), and last the row that takes a pasted number or URL.
 */
export function pullRequestPicks(list: PullRequestListResult): PullRequestPick[] {
  const rows: PullRequestPick[] = list.open.map((pr) => ({
    pick: 'request',
    target: pr.target,
    label: ui`${requestRef(pr.target.provider, pr.number)} ${pr.title}`,
    description: ui`${pr.author} · ${pr.headRef} → ${pr.baseRef}`,
    ...detailOf(pr, list.viewer),
  }));
  rows.push({ pick: 'paste', label: ui`Paste a number or URL…`, description: ui`any request of ${list.repo.owner}/${list.repo.repo}`, alwaysShow: true });
  return rows;
}

function detailOf(pr: PullRequestSummary, viewer: string | null): { detail?: UiText } {
  const notes: UiText[] = [];
  if (pr.draft) notes.push(ui`Draft`);
  if (viewer !== null && viewer.toLowerCase() === pr.author.toLowerCase()) notes.push(ui`Yours: its review continues in rounds, not in an approving review`);
  return notes.length > 0 ? { detail: uiJoin(notes, ' · ') } : {};
}

/** The picker's placeholder: which repository, and how many requests are open. */
export function pullRequestPlaceholder(list: PullRequestListResult): UiText {
  const where = `${list.repo.owner}/${list.repo.repo} on ${list.repo.host}`;
  const noun = list.repo.provider === 'gitlab' ? 'merge request' : 'pull request';
  if (list.open.length === 0) return ui`No open ${noun}s on ${where}: paste a number or URL`;
  return ui`${list.open.length} open ${noun}${list.open.length === 1 ? '' : 's'} on ${where}: pick one to review, or paste a number or URL`;
}

// ─── Refusals and their repairs ──────────────────────────────────────────────────────────────

/** The forge a token was last asked for and the editor held none (what the host found missing). */
export interface MissingToken {
  provider: ForgeProvider;
  host: string;
}

export type ForgeRepair =
  | { kind: 'sign-in-github'; host: string; label: UiText }
  | { kind: 'set-gitlab-token'; host: string; label: UiText }
  | { kind: 'forge-settings'; label: UiText }
  | { kind: 'capture-new-head'; label: UiText };

/**
 * The one repair a refusal of a forge act offers, when an obvious one exists: credentials for the
 * forge that lacks them (the token the host just asked for and did not get, else the provider the
 * message names), the `rennet.forges` setting for an unregistered or malformed forge, Capture New
 * Head for a moved request. `host` is the forge the act was for, when known.
 */
export function forgeRepair(error: Pick<RennetError, 'code' | 'message'>, missing: MissingToken | null, known?: { provider: ForgeProvider; host: string }): ForgeRepair | null {
  switch (error.code) {
    case 'forge-unauthorized': {
      const forge =
        missing ??
        known ??
        (/\bGitLab\b/.test(error.message)
          ? { provider: 'gitlab' as const, host: hostNamed(error.message) ?? 'gitlab.com' }
          : { provider: 'github' as const, host: hostNamed(error.message) ?? 'github.com' });
      return forge.provider === 'gitlab' ? { kind: 'set-gitlab-token', host: forge.host, label: ui`Set GitLab Token` } : { kind: 'sign-in-github', host: forge.host, label: ui`Sign in to GitHub` };
    }
    case 'head-moved':
      return { kind: 'capture-new-head', label: ui`Capture New Head` };
    case 'invalid-request':
      return /not a registered forge|rennet\.forges|RENNET_FORGES/.test(error.message) ? { kind: 'forge-settings', label: ui`Open Settings` } : null;
    default:
      return null;
  }
}

/** "no GitHub credentials for ghe.example.com: …" → ghe.example.com. */
function hostNamed(message: string): string | null {
  const match = /credentials for ([A-Za-z0-9.-]+(?::[0-9]{1,5})?)/.exec(message);
  return match?.[1] ?? null;
}

/** A refusal as the notification says it: what was being done, then the host's words. */
export function refusalMessage(doing: string, error: Pick<RennetError, 'message'>): UiText {
  return ui`Rennet could not ${doing}: ${error.message}`;
}

// ─── Links ───────────────────────────────────────────────────────────────────────────────────

/**
 * Whether a link from a forge may be opened with `env.openExternal`: an http(s) URL whose host is
 * the forge's own (the request's and the review's pages live there). Anything else — another
 * site, another scheme, credentials in the URL — stays shown, never opened.
 */
export function isForgeLink(url: string, forgeHost: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return false;
  if (parsed.username || parsed.password) return false;
  return parsed.host.toLowerCase() === forgeHost.trim().toLowerCase();
}

/**
 * A refused URL as a log line may name it: quoted, control characters shown as escapes, every
 * scheme's colon bracketed and `http` spelled `hxxp`, every dot bracketed (`“hxxps[:]//evil[.]example/x”`),
 * so the Output view's link detection finds no URL, domain or path in it to make clickable.
 */
export function unlinkableUrl(url: string): string {
  const defanged = escapeControls(url)
    .replace(/(^|[^A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]*):/g, (_m, lead: string, scheme: string) => `${lead}${scheme.replace(/^(h)tt(ps?)$/i, '$1xx$2')}[:]`)
    .replace(/\./g, '[.]');
  return `“${defanged}”`;
}

/** A receipt's verdict in words: "Approve", "Comment", "Request changes". */
export function eventWords(event: 'APPROVE' | 'COMMENT' | 'REQUEST_CHANGES'): string {
  return event === 'APPROVE' ? 'Approve' : event === 'REQUEST_CHANGES' ? 'Request changes' : 'Comment';
}

// ─── Open pull request (own branch) ──────────────────────────────────────────────────────────

/** The modal's text: exactly what is pushed and submitted (plain text: a modal renders no Markdown). */
export function openPullRequestDetail(p: OpenPullRequestPreview): UiText {
  const where = `${p.destination.owner}/${p.destination.repo} on ${p.destination.host} (remote ${p.destination.remote})`;
  const action = p.existing
    ? `Pushes ${p.branch} to ${where} and reuses the open request ${p.existing.url} for ${p.branch} → ${p.base}.`
    : `Pushes ${p.branch} to ${where} and opens a request ${p.branch} → ${p.base} with this title and description:`;
  // Each part is escaped on its own and joined with real line breaks (uiText escapes a line break in its text).
  return uiJoin(
    [
      uiText(action),
      uiText(p.title),
      uiJoin(
        p.body.split('\n').map((line) => uiText(line)),
        '\n',
      ),
      uiText(polishWords(p.polish)),
    ],
    '\n\n',
  );
}

/** Who wrote the text, beside it: the model (and whether its stored text was reused), or why the draft stands. */
export function polishWords(polish: OpenPullRequestPreview['polish']): string {
  switch (polish.state) {
    case 'polished':
      return `Title and description written by ${polish.harness}${polish.model ? ` (${polish.model})` : ''} from the branch's review${polish.reused ? ', as before: nothing it read has changed' : ''}.`;
    case 'failed':
      return `The model's pass did not finish (${polish.message}): this is the draft from the commits and the review boards.`;
    case 'off':
      return `Drafted without a model: ${polish.reason}.`;
  }
}

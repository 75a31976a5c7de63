/**
 * Which link targets in model-written or repository text may stay live links. One rule for the
 * board panel, the HTML export and the editor's comment threads.
 *
 * VS Code opens a link to this machine or the local network without asking (its link protection
 * trusts localhost), and a loopback address is where the reviewer's own services listen — Rennet's
 * MCP servers, a model server, a dev server. A link whose host names such a place is shown as text
 * carrying its URL, never opened. Pure: only the WHATWG `URL` global (browser and Node alike).
 */

/** The WHATWG `URL` global, which ES2022 (protocol/'s only lib) does not declare: what is used here. */
declare class URL {
  constructor(url: string);
  readonly hostname: string;
}

/** Why a link is not live, or null when it may be. */
export type InertLinkReason = 'private-network' | 'unparsable';

/** Top-level labels that only ever name the local machine or a local network. */
const LOCAL_SUFFIXES = ['localhost', 'local', 'internal', 'lan', 'home.arpa', 'intranet', 'corp'] as const;

/**
 * Whether an http(s) URL's host is this machine or a private network: localhost names, loopback,
 * unspecified, private (RFC 1918), shared (RFC 6598), link-local (cloud metadata lives there) and
 * unique-local IPv6 addresses, IPv4-mapped forms of those, and single-label names an intranet
 * resolves. The WHATWG parser normalises numeric hosts first (`http://0x7f.1`, `http://2130706433`
 * are 127.0.0.1), so every spelling of an address is judged as that address.
 */
export function isPrivateNetworkHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (host.length === 0) return true;
  if (host.startsWith('[') && host.endsWith(']')) return isPrivateIpv6(host.slice(1, -1));
  const v4 = parseIpv4(host);
  if (v4) return isPrivateIpv4(v4);
  if (!host.includes('.')) return true; // `http://router/`, `http://localhost/`: an intranet name
  return LOCAL_SUFFIXES.some((suffix) => host === suffix || host.endsWith(`.${suffix}`));
}

/**
 * Null when `href` may be a live link (an http(s) URL to a public host, a `mailto:`, an in-page
 * `#fragment`); else why it must stay text. Other schemes are not judged here: each renderer
 * already allows only http(s), mailto and fragments.
 */
export function inertLinkReason(href: string): InertLinkReason | null {
  const compact = href.trim().replace(/[\u0000-\u001f\u007f\s]/g, '');
  if (compact.startsWith('#') || /^mailto:/i.test(compact)) return null;
  if (!/^https?:/i.test(compact)) return null;
  let url: URL;
  try {
    url = new URL(compact);
  } catch {
    return 'unparsable';
  }
  return isPrivateNetworkHost(url.hostname) ? 'private-network' : null;
}

/** The words a renderer shows beside an inert link's URL. */
export function inertLinkNote(reason: InertLinkReason): string {
  return reason === 'private-network' ? 'not opened: it points at this machine or a private network' : 'not opened: not a valid URL';
}

/**
 * What a renderer shows after an inert link's label: its URL and why it was not opened, or only
 * the note when the label already is the URL (an autolink). One wording for every surface.
 */
export function inertLinkSuffix(url: string, note: string, labelIsUrl = false): string {
  return labelIsUrl ? ` (${note})` : ` (${url} — ${note})`;
}

function parseIpv4(host: string): [number, number, number, number] | null {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (!match) return null;
  const parts = match.slice(1).map(Number);
  if (parts.some((p) => p > 255)) return null;
  return parts as [number, number, number, number];
}

function isPrivateIpv4([a, b]: readonly [number, number, number, number]): boolean {
  return (
    a === 0 || // "this network", 0.0.0.0 reaches the local machine
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) || // shared address space (carrier NAT)
    (a === 169 && b === 254) || // link-local, cloud instance metadata
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 198 && (b === 18 || b === 19)) || // benchmarking networks, used inside labs
    a >= 224 // multicast and reserved
  );
}

function isPrivateIpv6(address: string): boolean {
  const host = address.toLowerCase();
  if (host === '::' || host === '::1') return true;
  // IPv4 inside IPv6, as the URL parser prints it: mapped (`::ffff:7f00:1`), translated
  // (`::ffff:0:7f00:1`), the old compatible form (`::7f00:1`) and NAT64 (`64:ff9b::7f00:1`).
  const mapped = /^(?:::ffff:(?:0:)?|::|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host);
  if (mapped) {
    const hi = parseInt(mapped[1] ?? '0', 16);
    const lo = parseInt(mapped[2] ?? '0', 16);
    return isPrivateIpv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  }
  const dotted = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(host);
  if (dotted) {
    const v4 = parseIpv4(dotted[1] ?? '');
    return v4 ? isPrivateIpv4(v4) : true;
  }
  const first = parseInt(host.split(':')[0] || '0', 16);
  return (
    (first & 0xfe00) === 0xfc00 || // unique local fc00::/7
    (first & 0xffc0) === 0xfe80 || // link-local fe80::/10
    (first & 0xff00) === 0xff00 // multicast
  );
}

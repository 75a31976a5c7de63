/**
 * `--json` with an optional value, for parseArgs (which has no optional-value options).
 *
 * Rewrites every `--json` token to `--json=VALUE` so parseArgs reads it as a string option:
 * - `rennet review … --json FILE` or `rennet round … --json FILE` (the next token is not an
 *   option): VALUE is FILE, the review report's or the round's path;
 * - any other bare `--json` (last token, followed by an option, or on another command):
 *   VALUE is empty, the old flag ("print JSON to stdout").
 * `--json=FILE` passes through. Tokens that are another option's value are skipped, so
 * `--repo --json` style mistakes stay parseArgs's to report; nothing after `--` is touched.
 */
export function normalizeJsonFlag(argv: readonly string[], valueOptions: ReadonlySet<string>): string[] {
  const out: string[] = [];
  let command: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] as string;
    if (token === '--') {
      out.push(...argv.slice(i));
      break;
    }
    if (token === '--json') {
      const next = argv[i + 1];
      if ((command === 'review' || command === 'round') && next !== undefined && next.length > 0 && !next.startsWith('-')) {
        out.push(`--json=${next}`);
        i++;
      } else {
        out.push('--json=');
      }
      continue;
    }
    out.push(token);
    if (token.startsWith('--') && !token.includes('=') && valueOptions.has(token.slice(2))) {
      const value = argv[i + 1];
      if (value !== undefined) {
        out.push(value);
        i++;
      }
      continue;
    }
    if (!token.startsWith('-') && command === undefined) command = token;
  }
  return out;
}

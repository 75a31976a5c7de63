/** A wrong `rennet eval` command line: the CLI prints the message and the eval usage, exit 2. */
export class EvalUsageError extends Error {}

export const EVAL_USAGE = `Usage:
  rennet eval corpus --repo DIR [--since DATE] [--limit N] --out FILE
  rennet eval corpus --builtin DIR --out FILE
  rennet eval run    --cases FILE --harness NAME [--base-url URL] [--model NAME] [--jobs N] --out DIR
  rennet eval score  --run DIR [--threshold SEVERITY] [--tolerance K] [--json FILE] [--html FILE]
  rennet eval compare --run DIR --run DIR [--json FILE] [--html FILE]
`;

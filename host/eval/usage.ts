import { EVAL_DEFAULT_LINE_TOLERANCE, EVAL_DEFAULT_SEVERITY_THRESHOLD, EVAL_MAX_JOBS } from '../../protocol/eval';

/** A wrong `rennet eval` command line: the CLI prints the message and the eval usage, exit 2. */
export class EvalUsageError extends Error {}

export const EVAL_USAGE = `Usage:
  rennet eval corpus --repo DIR [--since DATE] [--limit N] --out FILE
  rennet eval corpus --builtin DIR --out FILE
  rennet eval run    --cases FILE --harness NAME [--base-url URL] [--model NAME] [--jobs N] [--store DIR] --out DIR
  rennet eval score  --run DIR [--threshold SEVERITY] [--tolerance K] [--json FILE] [--html FILE]
                     [--judge NAME [--judge-base-url URL] [--judge-model NAME]]
  rennet eval compare --run DIR --run DIR [--threshold SEVERITY] [--tolerance K] [--json FILE] [--html FILE]

run reviews every case (base..head) through the normal review pipeline, keeps every generation
(in DIR/store unless --store), writes DIR/cases/<id>.json as each case finishes and resumes where
it stopped; at the end it writes DIR/score.json and DIR/report.html with the default rules
(--threshold ${EVAL_DEFAULT_SEVERITY_THRESHOLD}, --tolerance ${EVAL_DEFAULT_LINE_TOLERANCE}; --jobs at most ${EVAL_MAX_JOBS}). score rescores a run (a judge harness may grade
each catching finding, beside the score). compare sets two runs of the same cases side by side.
See docs/eval.md.
`;

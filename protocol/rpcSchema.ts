import { NotificationType, RequestType } from 'vscode-jsonrpc';
import { z } from 'zod';
import { RPC_PARAMS_MAX_CHARS, RPC_PARAMS_MAX_DEPTH } from './limits';
import { errorMessage, type Result } from './result';

/**
 * How a JSON-RPC message of ours is declared: its method, the zod schema of its params (the TS
 * param type is the schema's output, so the two cannot drift; a sender holds values of that type,
 * and the wire may also carry what the schema defaults) and how its receiver answers a refusal.
 * The constants stay `RequestType` / `NotificationType` instances, so `sendRequest(HostHello, {})`
 * reads as before; the receiving edge (rpcEdge.ts) reads `paramsSchema` off the same constant.
 *
 * Kept out of index.ts like rpc.ts: the webview bundle never pulls in the JSON-RPC runtime.
 */

/**
 * How a request's receiver answers params it refuses and a handler that failed: `result` — a
 * failed `Result` (`invalid-request` / `internal-error`), what every extension → host request
 * answers; `value` — a JSON-RPC error (InvalidParams / InternalError), for requests whose answer
 * is not a Result (hello, the session list, the host → extension requests).
 */
export type RefusalShape = 'result' | 'value';

/** The answer type of a request, carried as a phantom next to how it refuses. */
export interface Answer<R> {
  readonly refusal: RefusalShape;
  /** Never set: carries R to the request's type. */
  readonly answer?: R;
}

/** The request answers `Result<V>`; a refusal at the edge is a failed Result. */
export const answersResult = <V>(): Answer<Result<V>> => ({ refusal: 'result' });
/** The request answers a plain value; a refusal at the edge is a JSON-RPC error. */
export const answersValue = <R>(): Answer<R> => ({ refusal: 'value' });

export interface MessageOptions {
  /** Ceiling on the params, as JSON characters; default RPC_PARAMS_MAX_CHARS. */
  maxParamsChars?: number;
  /**
   * Detail every edge refusal of this request carries, for domains whose refusals name a reason
   * a caller switches on (asks: `refusal`, explain: `reason`).
   */
  invalidDetail?: Readonly<Record<string, string>>;
}

/** What the edge needs of any of our messages. */
export interface SchemaMessage<P extends z.ZodType = z.ZodType> {
  readonly method: string;
  readonly paramsSchema: P;
  readonly maxParamsChars: number;
}

/** An extension ⇄ host request: a `RequestType` that carries its params schema. */
export class RennetRequest<P extends z.ZodType, R> extends RequestType<z.output<P>, R, void> implements SchemaMessage<P> {
  readonly maxParamsChars: number;
  readonly invalidDetail: Readonly<Record<string, string>>;
  constructor(
    method: string,
    readonly paramsSchema: P,
    readonly refusal: RefusalShape,
    options: MessageOptions = {},
  ) {
    super(method);
    this.maxParamsChars = options.maxParamsChars ?? RPC_PARAMS_MAX_CHARS;
    this.invalidDetail = options.invalidDetail ?? {};
  }
}

/** An extension ⇄ host notification: a `NotificationType` that carries its params schema. */
export class RennetNotification<P extends z.ZodType> extends NotificationType<z.output<P>> implements SchemaMessage<P> {
  readonly maxParamsChars: number;
  constructor(
    method: string,
    readonly paramsSchema: P,
    options: Pick<MessageOptions, 'maxParamsChars'> = {},
  ) {
    super(method);
    this.maxParamsChars = options.maxParamsChars ?? RPC_PARAMS_MAX_CHARS;
  }
}

/** Declares a request: `rpcRequest('rennet/x/y', XParams, answersResult<XValue>())`. */
export function rpcRequest<P extends z.ZodType, R>(method: string, params: P, answer: Answer<R>, options?: MessageOptions): RennetRequest<P, R> {
  return new RennetRequest<P, R>(method, params, answer.refusal, options);
}

/** Declares a notification: `rpcNotification('rennet/x/changed', XParams)`. */
export function rpcNotification<P extends z.ZodType>(method: string, params: P, options?: Pick<MessageOptions, 'maxParamsChars'>): RennetNotification<P> {
  return new RennetNotification<P>(method, params, options);
}

/** The params of a request that takes none: an object, its keys ignored. */
export const NoParams = z.object({});
export type NoParams = z.infer<typeof NoParams>;

// ─── The pure check ──────────────────────────────────────────────────────────────────────────

export type ParamsCheck<T> =
  | { ok: true; params: T }
  /** `field`: the first offending field (`target.head`, `command.anchor`), or `(params)` for the whole. */
  | { ok: false; field: string; message: string };

/** Issues named in a refusal; the rest are counted. */
const ISSUES_SHOWN = 3;

/**
 * Checks `raw` (one message's params as received; `undefined` when none came) against the
 * message's bounds and schema. Never throws: every refusal is a sentence naming the method, the
 * field and why. zod's words name paths and expectations, never the values (a key rides in
 * a harness config).
 */
export function checkParams<P extends z.ZodType>(message: SchemaMessage<P>, raw: unknown): ParamsCheck<z.output<P>> {
  const shape = jsonShapeProblem(raw, message.maxParamsChars, RPC_PARAMS_MAX_DEPTH);
  if (shape !== null) return { ok: false, field: '(params)', message: `${message.method}: ${shape}` };
  let parsed: z.ZodSafeParseResult<z.output<P>>;
  try {
    parsed = message.paramsSchema.safeParse(raw) as z.ZodSafeParseResult<z.output<P>>;
  } catch (error) {
    // A refinement that threw: still a refusal, never a crash.
    return { ok: false, field: '(params)', message: `${message.method}: the params could not be checked (${errorMessage(error)})` };
  }
  if (parsed.success) return { ok: true, params: parsed.data };
  const issues = parsed.error.issues;
  const named = issues.slice(0, ISSUES_SHOWN).map((issue) => `${fieldOf(issue.path)}: ${issue.message}`);
  const more = issues.length > ISSUES_SHOWN ? `; and ${issues.length - ISSUES_SHOWN} more` : '';
  return { ok: false, field: fieldOf(issues[0]?.path ?? []), message: `${message.method}: ${named.join('; ')}${more}` };
}

function fieldOf(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(params)';
  return path.map((part, i) => (typeof part === 'number' ? `[${part}]` : `${i === 0 ? '' : '.'}${String(part)}`)).join('');
}

/**
 * Why `value` is too big or too deep to validate, or null. Walks it once without recursion (a
 * hostile nesting cannot overflow the stack) and stops as soon as a bound is crossed, so a huge
 * payload costs no more than the bound to measure. Sizes are about the JSON text's characters.
 */
export function jsonShapeProblem(value: unknown, maxChars: number, maxDepth: number): string | null {
  const tooBig = `the params are over ${maxChars} characters (the limit for this message); nothing was done`;
  let chars = 0;
  // Two parallel stacks (value, depth): no object per visited node.
  const values: unknown[] = [value];
  const depths: number[] = [0];
  while (values.length > 0) {
    const next = values.pop();
    const depth = depths.pop()!;
    if (typeof next === 'string') chars += next.length + 2;
    else if (typeof next === 'number' || typeof next === 'boolean' || typeof next === 'bigint') chars += 6;
    else if (next === null || next === undefined) chars += 4;
    else if (typeof next === 'object') {
      if (depth >= maxDepth) return `the params nest deeper than ${maxDepth} levels; nothing was done`;
      // The container's own characters are counted before its children are queued.
      if (Array.isArray(next)) {
        chars += 2 + next.length;
        if (chars > maxChars) return tooBig;
        for (const item of next as unknown[]) {
          values.push(item);
          depths.push(depth + 1);
        }
      } else {
        const keys = Object.keys(next);
        chars += 2 + keys.length * 4;
        for (const key of keys) chars += key.length;
        if (chars > maxChars) return tooBig;
        for (const key of keys) {
          values.push((next as Record<string, unknown>)[key]);
          depths.push(depth + 1);
        }
      }
    } else chars += 4; // a function or symbol: not JSON, counted as a token
    if (chars > maxChars) return tooBig;
  }
  return null;
}

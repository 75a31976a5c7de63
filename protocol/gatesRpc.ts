import { GatesMergeParams, GatesReadParams, type GatesReport, type MergeResult } from './gates';
import { answersResult, rpcRequest } from './rpcSchema';

/**
 * The merge gates' extension ⇄ host messages (kept out of rpc.ts's shared list, and out of
 * index.ts like rpc.ts, so the webview bundle never pulls in the JSON-RPC runtime). Schemas:
 * protocol/gates.ts; host: host/forge/gates.ts.
 */

/**
 * extension → host: the merge gates of a pull-request session's request, read from its forge now
 * (checks, statuses or pipeline jobs by name, draft, mergeable, behind-base, required-reviews,
 * review-at-head), with the local copy's freshness against the request's head. Nothing is changed.
 */
export const GatesRead = rpcRequest('rennet/gates/read', GatesReadParams, answersResult<GatesReport>());

/**
 * extension → host: merge the session's request by `method`, pinned to `expectHead`. The gates are
 * read again first: a head that is not `expectHead` is refused (`head-moved`) and so is the forge's
 * own 409 for a head that moved during the call; a gate that does not pass is refused
 * (`gates-blocked`). Nothing is merged on a refusal.
 */
export const GatesMerge = rpcRequest('rennet/gates/merge', GatesMergeParams, answersResult<MergeResult>());

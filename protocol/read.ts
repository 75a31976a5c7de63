/**
 * The read tools every seat gets (host/read/): their names and every limit they keep. A seat reads
 * the change only through these, from the immutable capture (blobs and trees by object id), never
 * from a working tree.
 */

export const LIST_CHANGES = 'list_changes';
export const READ_DIFF = 'read_diff';
export const READ_FILE = 'read_file';
export const SEARCH_CODE = 'search_code';
export const READ_CONTEXT = 'read_context';

export const READ_TOOL_NAMES = [LIST_CHANGES, READ_DIFF, READ_FILE, SEARCH_CODE, READ_CONTEXT] as const;
export type ReadToolName = (typeof READ_TOOL_NAMES)[number];

/** Ceiling on one read tool result, in UTF-8 bytes; a cut result says where to continue. */
export const READ_RESULT_MAX_BYTES = 16 * 1024;
/** Characters of one source or diff line a result shows before an ellipsis. */
export const READ_LINE_MAX_CHARS = 400;
/** Lines one read_file call returns at most. */
export const READ_FILE_MAX_LINES = 300;
/** Matches one search_code call returns at most, and per file. */
export const SEARCH_MAX_MATCHES = 100;
export const SEARCH_MAX_MATCHES_PER_FILE = 20;
/** Characters of a search pattern. */
export const SEARCH_PATTERN_MAX_CHARS = 200;
/** Context files read_context serves, whole or cut at READ_RESULT_MAX_BYTES. */
export const READ_CONTEXT_MAX_BYTES = 512 * 1024;

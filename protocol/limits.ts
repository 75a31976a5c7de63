/**
 * Every limit the product enforces, named once. Callers import these; no magic numbers elsewhere.
 */

/** Default ceiling on a base or head blob before a file is captured truncated (no hunks read). */
export const CAPTURE_MAX_FILE_BYTES = 1024 * 1024;
/** Smallest file-size ceiling a user may configure. */
export const CAPTURE_MIN_FILE_BYTES = 1024;
/** Ceiling on one file's captured patch text; hunks past it are dropped and the tail stated. */
export const CAPTURE_MAX_PATCH_BYTES_PER_FILE = 512 * 1024;
/** Context lines around every hunk (git's -U). Part of the patchset identity. */
export const CAPTURE_CONTEXT_LINES = 3;
/** Hex characters of SHA-256 kept in content-derived ids (hunks, patchsets). */
export const CONTENT_ID_HEX_LENGTH = 16;
/** Largest blob the host returns in one read; larger blobs come back truncated and say so. */
export const BLOB_READ_MAX_BYTES = 8 * 1024 * 1024;
/** Most branches offered in the branch picker. */
export const BRANCH_LIST_MAX = 500;
/** Characters of an error message carried across the wire before an honest truncation marker. */
export const ERROR_MESSAGE_MAX_CHARS = 2000;
/**
 * Characters (about, as JSON text) of one JSON-RPC message's params that the receiving edge will
 * validate; bigger params are refused before any handler runs (protocol/rpcEdge.ts).
 */
export const RPC_PARAMS_MAX_CHARS = 4 * 1024 * 1024;
/**
 * The same ceiling for the messages that carry whole snapshots or a seat's transcript to the
 * extension (a session's file list, a generation, an ask projection, a model request).
 */
export const RPC_BULK_PARAMS_MAX_CHARS = 256 * 1024 * 1024;
/** Deepest nesting of arrays and objects in one message's params before the edge refuses it. */
export const RPC_PARAMS_MAX_DEPTH = 64;

export { Store, type StoreOptions, type StoredEvent, type SessionInput, type PatchsetBodyWriter, type PatchsetRowInput } from './store';
export { patchsetJsonChunks } from './patchsetJson';
export { StoreError, isStoreError } from './errors';
export { defaultDataDir } from './paths';
export { SCHEMA_VERSION, MIGRATIONS, type Migration } from './migrations';
export { boardKeyOf, parseBoardKey, type BoardKeyParts, type BoardMetaInput, type StoredBoardMeta, type BoardEventInput, type StoredBoardEvent } from './boards';
export { GenerationStatus, LaneOutcomeState, type GenerationInput, type StoredGeneration, type LaneOutcomeInput, type StoredLaneOutcome } from './generations';
export { claimGenerationRun, generationRunHolder, describeHolder, type ClaimResult, type RunClaim, type RunHolder } from './runClaims';

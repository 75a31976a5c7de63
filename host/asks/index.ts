export { foldAsks, foldAskLog, applyAskEvent, stepAsks, checkAskEvent, inverseOf, flaggedOpenCount, EMPTY_ASK_PROJECTION, type AskFold, type AskStep } from './fold';
export { mintAskEvent, parseAskCommand, type MintContext, type Minted } from './commands';
export { AskLog, decodeAskEvent, canonicalJson, type AskLogStore, type AskLogOptions, type AskAppend, type AskCommandOutcome, type DecodedAskEvent } from './log';

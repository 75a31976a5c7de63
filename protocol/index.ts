export * from './limits';
export * from './result';
export * from './patchset';
export * from './session';
export * from './webview';
export * from './board';
export * from './review';
export * from './asks';

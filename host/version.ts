/** Replaced at build time by esbuild's `define`; falls back for tsx-run tests. */
declare const __RENNET_VERSION__: string | undefined;
export const HOST_VERSION: string = typeof __RENNET_VERSION__ === 'string' ? __RENNET_VERSION__ : '0.0.0-dev';

/** esbuild's `.css: 'text'` loader: a stylesheet imports as its text. */
declare module '*.css' {
  const text: string;
  export default text;
}

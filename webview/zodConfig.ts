/**
 * Imported first by main.tsx, before any schema is built: zod decides at schema construction
 * whether to compile fast parsers with `new Function`, and that probe is refused (and reported)
 * by the panel's CSP. Jitless parsing is plenty for a few messages.
 */
import { z } from 'zod';

z.config({ jitless: true });

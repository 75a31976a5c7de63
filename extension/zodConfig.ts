/**
 * Imported first by main.ts: zod probes `new Function` (and touches `navigator`) when it builds
 * its first schema; the extension host logs that probe as an error. Jitless parsing is plenty here.
 */
import { z } from 'zod';

z.config({ jitless: true });

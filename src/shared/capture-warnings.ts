/**
 * Imported first by the CLI, before any other module runs: node's process warnings from here on
 * become JSON lines of the service's log (process-warnings.ts).
 */
import { captureProcessWarnings } from './process-warnings.js';

captureProcessWarnings();

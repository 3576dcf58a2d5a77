// `npm run bench`: every committed budget, measured. Exits non-zero when one is over.
import { runStartupBench } from './startup.js';

const results = [runStartupBench()];
process.exitCode = results.every(Boolean) ? 0 : 1;

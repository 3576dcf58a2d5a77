// `npm run bench`: every committed budget, measured. Exits non-zero when one is over.
import { runEmulatorBench } from './emulator.js';
import { runStartupBench } from './startup.js';
import { runUploadBench } from './upload.js';

const results = [runStartupBench(), await runEmulatorBench(), await runUploadBench()];
process.exitCode = results.every(Boolean) ? 0 : 1;

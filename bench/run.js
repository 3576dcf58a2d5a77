// `npm run bench`: every committed budget, measured. Exits non-zero when one is over.
import { runBucketBench } from './bucket.js';
import { runEmulatorBench } from './emulator.js';
import { runGamesBench } from './games.js';
import { runRequestBench } from './request.js';
import { runStartupBench } from './startup.js';
import { runTableBench } from './table.js';
import { runUploadBench } from './upload.js';

const results = [runStartupBench(), await runRequestBench(), await runEmulatorBench(), await runGamesBench(), await runUploadBench(), await runBucketBench(), await runTableBench()];
process.exitCode = results.every(Boolean) ? 0 : 1;

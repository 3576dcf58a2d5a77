// `npm run bench`: every committed budget, measured. Exits non-zero when one is over.
import { runBucketBench } from './bucket.js';
import { runEmulatorBench } from './emulator.js';
import { runFindBench } from './find.js';
import { runGamesBench } from './games.js';
import { runEmulatorPostgresBench } from './emulator-postgres.js';
import { runRequestBench } from './request.js';
import { runStartupBench } from './startup.js';
import { runTableBench } from './table.js';
import { runUploadBench } from './upload.js';

const results = [
  runStartupBench(),
  await runRequestBench(),
  await runEmulatorBench(),
  await runEmulatorPostgresBench(),
  await runFindBench(),
  await runGamesBench(),
  await runUploadBench(),
  await runBucketBench(),
  await runTableBench(),
];
process.exitCode = results.every(Boolean) ? 0 : 1;

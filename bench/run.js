// `npm run bench`: every committed budget, measured. Exits non-zero when one is over.
import { runBucketBench } from './bucket.js';
import { runEmulatorBench } from './emulator.js';
import { runGamesBench } from './games.js';
import { runInstalledBench } from './installed.js';
import { runLobbyReadsBench } from './lobby-reads.js';
import { runEmulatorPostgresBench } from './emulator-postgres.js';
import { runRequestBench } from './request.js';
import { runRuntimeBench } from './runtime.js';
import { runStartupBench } from './startup.js';
import { runTableBench } from './table.js';
import { runUploadBench } from './upload.js';

const results = [
  runStartupBench(),
  runInstalledBench(),
  await runRequestBench(),
  await runEmulatorBench(),
  await runEmulatorPostgresBench(),
  await runGamesBench(),
  await runLobbyReadsBench(),
  await runUploadBench(),
  await runBucketBench(),
  await runTableBench(),
  await runRuntimeBench(),
];
process.exitCode = results.every(Boolean) ? 0 : 1;

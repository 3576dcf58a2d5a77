// `npm run bench`: every committed budget, measured. Exits non-zero when one is over. `npm run bench -- --clean`
// removes the input files the upload benches keep in .bench/ (bench/cache.js), and measures nothing.
import { BENCH_CACHE, cacheDiskBytes, cleanCache } from './cache.js';
import { runBucketBench } from './bucket.js';
import { runContainerBench } from './container.js';
import { runDeployBench } from './deploy.js';
import { runEmulatorBench } from './emulator.js';
import { runFindBench } from './find.js';
import { runIdleFindBench } from './idle-find.js';
import { runGamesBench } from './games.js';
import { runInstalledBench } from './installed.js';
import { runLobbyReadsBench } from './lobby-reads.js';
import { runLogFloodBench } from './log-flood.js';
import { runEmulatorPostgresBench } from './emulator-postgres.js';
import { runRequestBench } from './request.js';
import { runRuntimeBench } from './runtime.js';
import { runStartupBench } from './startup.js';
import { runTableBench } from './table.js';
import { runUploadBench } from './upload.js';

if (process.argv.includes('--clean')) {
  const bytes = cacheDiskBytes();
  cleanCache();
  console.error(`removed ${BENCH_CACHE} (${(bytes / 1024 ** 3).toFixed(2)} GiB on disk)`);
  process.exit(0);
}

const results = [
  runStartupBench(),
  runInstalledBench(),
  await runRequestBench(),
  await runEmulatorBench(),
  await runEmulatorPostgresBench(),
  await runFindBench(),
  await runIdleFindBench(),
  await runGamesBench(),
  await runLobbyReadsBench(),
  await runUploadBench(),
  await runBucketBench(),
  await runTableBench(),
  await runRuntimeBench(),
  await runLogFloodBench(),
  await runContainerBench(),
  await runDeployBench(),
];
process.exitCode = results.every(Boolean) ? 0 : 1;
console.error(`kept the bench input files in ${BENCH_CACHE} (${(cacheDiskBytes() / 1024 ** 3).toFixed(2)} GiB on disk) for the next run; \`npm run bench -- --clean\` removes them`);

// Closing an emulator with a grace period (what `emulator serve` does on SIGTERM) leaves nothing running behind it.
import { expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/index.js';
import { tempDir } from '../helpers/cli.js';

const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;

it('close({ graceMs }) leaves no timer behind once it resolves', async () => {
  const emu = await startEmulator({ dataDir: tempDir() });
  // A keep-alive connection, so the grace loop has one to wait for.
  expect((await fetch(`${emu.endpoint}/_emulator/health`)).status).toBe(200);
  const before = timers();
  await emu.close({ graceMs: 10_000 });
  expect(timers()).toBeLessThanOrEqual(before);
});

// Closing an emulator with a grace period (what `emulator serve` does on SIGTERM) leaves nothing running behind it,
// and nothing a client holds open keeps it from closing.
import { request } from 'node:http';
import { expect, it, vi } from 'vitest';
import { GAME_ID, startEmulator } from '../../src/emulator/index.js';
import { tempDir } from '../helpers/cli.js';
import { startTestEmulator } from '../helpers/emulator.js';

const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;

it('close({ graceMs }) leaves no timer behind once it resolves', async () => {
  const emu = await startEmulator({ dataDir: tempDir() });
  // A keep-alive connection, so the grace loop has one to wait for.
  expect((await fetch(`${emu.endpoint}/_emulator/health`)).status).toBe(200);
  const before = timers();
  await emu.close({ graceMs: 10_000 });
  expect(timers()).toBeLessThanOrEqual(before);
});

it('a log watch in flight is answered as the emulator closes, and its answer ends the connection', async () => {
  // A watch that would wait a minute for a line, and a grace period longer than this test may take: the close must
  // end the watch, not wait for it.
  const emu = await startTestEmulator({}, { logWatch: { waitMs: 60_000, pollMs: 20, minMs: 0 } });
  const created = await emu.call('POST', '/matchmaker/lobbies/create', { token: emu.tokens.public, body: { game_mode: 'default' } });
  const lobbyId: string = created.json.lobby.lobby_id;
  await emu.services.logs.append(lobbyId, 'std_out', [Buffer.from('first')]);
  const path = `/cloud/games/${GAME_ID}/matchmaker/lobbies/${lobbyId}/logs?stream=std_out`;
  const { index } = (await emu.call('GET', path, { token: emu.tokens.cloud })).json.watch;
  const reading = new Promise<void>((resolve) => {
    const read = emu.services.logs.read.bind(emu.services.logs);
    vi.spyOn(emu.services.logs, 'read').mockImplementation((...args) => (resolve(), read(...args)));
  });
  // On a keep-alive connection, as a follow's client holds one.
  const watch = new Promise<{ status: number; connection: string | undefined; body: string }>((resolve, reject) => {
    const req = request(new URL(`${emu.endpoint}${path}&watch_index=${index}`), { headers: { authorization: `Bearer ${emu.tokens.cloud}`, connection: 'keep-alive' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, body }));
    });
    req.on('error', reject);
    req.end();
  });
  await reading;
  await emu.close({ graceMs: 120_000 });
  const answered = await watch;
  expect(answered.status).toBe(200);
  expect(answered.connection).toBe('close');
  // Nothing newer than its index: no lines, the same index.
  expect(JSON.parse(answered.body)).toMatchObject({ lines: [], watch: { index } });
});

// Idle-lobby budget (issue 34): a find answered by an idle lobby costs at most 1.5x a find into a running lobby with
// room: no server start is on its path (the lobby was made and readied before), and the top-up that replaces it runs
// after the answer. One emulator in this process, two namespaces: staging runs a version whose game mode keeps 16
// idle one-player lobbies in lnd-atl (each find takes one), prod one whose game mode has a 256-player lobby running
// (each find joins it). The same sequential finds on each, in alternating batches, medians of the per-find times;
// between batches the top-up is let catch up, so every measured find on staging is answered by an idle lobby.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEmulator } from '../dist/emulator/index.js';

const BUDGET = 1.5;
const BATCHES = Number(process.env.BENCH_IDLE_BATCHES ?? 10);
const PER_BATCH = Number(process.env.BENCH_IDLE_FINDS ?? 8);
const IDLE = 16;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function call(emu, method, pathname, token, body) {
  const res = await fetch(`${emu.endpoint}${pathname}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${pathname}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : {};
}

/** A version of the game with game mode `default` in lnd-atl, as `mode` says, running an uploaded build. */
async function version(emu, name, mode) {
  const game = `/cloud/games/${emu.gameId}`;
  const build = await call(emu, 'POST', `${game}/builds`, emu.tokens.cloud, { display_name: name, image_tag: `bench:${name}`, image_file: { path: 'server.tar', content_length: 4 } });
  await fetch(build.image_presigned_requests[0].url, { method: 'PUT', body: Buffer.alloc(4, 1) });
  await call(emu, 'POST', `/cloud/uploads/${build.upload_id}/complete`, emu.tokens.cloud, {});
  const config = { matchmaker: { docker: { image_id: build.build_id }, game_modes: { default: { regions: { 'lnd-atl': mode.region }, max_players: mode.maxPlayers } } } };
  return (await call(emu, 'POST', `${game}/versions`, emu.tokens.cloud, { display_name: name, config })).version_id;
}

async function timedFind(emu, token) {
  const t0 = performance.now();
  await call(emu, 'POST', '/matchmaker/lobbies/find', token, { game_modes: ['default'], regions: ['lnd-atl'] });
  return performance.now() - t0;
}

export async function runIdleFindBench() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gamehost-bench-idle-'));
  // No per-IP limit (every find here is from 127.0.0.1), no start or ready delay.
  const emu = await startEmulator({ dataDir: dir, config: { startDelayMs: 0, readyDelayMs: 0, rateLimits: false } });
  try {
    const game = `/cloud/games/${emu.gameId}`;
    const namespaces = (await call(emu, 'GET', game, emu.tokens.cloud)).game.namespaces;
    const ns = (nameId) => namespaces.find((n) => n.name_id === nameId).namespace_id;
    const idle = await version(emu, 'idle', { region: { idle_lobbies: { min: IDLE, max: IDLE } }, maxPlayers: 1 });
    const room = await version(emu, 'room', { region: {}, maxPlayers: 256 });
    await call(emu, 'PUT', `${game}/namespaces/${ns('staging')}/version`, emu.tokens.cloud, { version_id: idle });
    await call(emu, 'PUT', `${game}/namespaces/${ns('prod')}/version`, emu.tokens.cloud, { version_id: room });
    const staging = (await call(emu, 'POST', `${game}/namespaces/${ns('staging')}/tokens/public`, emu.tokens.cloud)).token;
    const prod = (await call(emu, 'POST', `${game}/namespaces/${ns('prod')}/tokens/public`, emu.tokens.cloud)).token;
    // prod's running lobby (the first find makes it), and a warm-up of each.
    for (let i = 0; i < 4; i++) {
      await timedFind(emu, prod);
      await timedFind(emu, staging);
    }
    const fromIdle = [];
    const intoRoom = [];
    for (let b = 0; b < BATCHES; b++) {
      // The top-up of the last batch's finds done: every find of this one has an idle lobby waiting.
      await emu.services.idleLobbies.settled();
      await new Promise((resolve) => setTimeout(resolve, 100));
      for (let i = 0; i < PER_BATCH; i++) fromIdle.push(await timedFind(emu, staging));
      for (let i = 0; i < PER_BATCH; i++) intoRoom.push(await timedFind(emu, prod));
    }
    const ratio = median(fromIdle) / median(intoRoom);
    const ok = ratio <= BUDGET;
    console.log(
      `find answered by an idle lobby: median ${median(fromIdle).toFixed(2)} ms, into a running lobby with room ${median(intoRoom).toFixed(2)} ms ` +
        `(${BATCHES} x ${PER_BATCH} each, in-process): ${ratio.toFixed(2)}x` + (ok ? `  ok (budget ${BUDGET}x)` : `  OVER BUDGET (${BUDGET}x)`),
    );
    return ok;
  } finally {
    await emu.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === new URL(import.meta.url).pathname) process.exitCode = (await runIdleFindBench()) ? 0 : 1;

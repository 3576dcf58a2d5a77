// Deploy budget (issue 34, a Docker daemon): `gamehost deploy` of a project whose one docker block names a local
// 100 MiB image at most 1.2x `gamehost build push --image` of the same image, side by side (A B A B …, medians).
// The deploy does what the push does (export from the daemon, upload) plus the config's reading, its validation, a
// name, the version's creation and the deploy to a namespace: those are what the budget holds small. The image is
// made here with no registry (FROM scratch, 100 MiB of random bytes, so nothing compresses), against one
// `emulator serve`, each run a new version and a new build.
import { spawnSync } from 'node:child_process';
import { randomFillSync } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServe } from './container.js';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(ROOT, 'bin', 'gamehost.js');
const RUNS = Number(process.env.BENCH_DEPLOY_RUNS ?? 5);
const BUDGET = 1.2;
const MiB = 1024 ** 2;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** One run of the bin, its wall time in ms; a failure stops the bench with what the command said. */
function timed(args, env, cwd) {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [BIN, ...args], { env, cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`gamehost ${args.join(' ')}: ${r.stderr}`);
  return performance.now() - t0;
}

export async function runDeployBench() {
  const { localDocker, buildDockerfile } = await import(new URL('../dist/upload/docker.js', import.meta.url).href);
  let docker;
  try {
    docker = await localDocker(process.env);
  } catch (err) {
    console.error(`deploy bench: skipped (${err.message})`);
    return true;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gamehost-bench-deploy-'));
  const tag = `gamehost-bench/deploy:${process.pid}`;
  let serve;
  try {
    const context = path.join(dir, 'context');
    fs.mkdirSync(context);
    const fd = fs.openSync(path.join(context, 'payload.bin'), 'w');
    const block = Buffer.alloc(4 * MiB);
    for (let i = 0; i < 25; i++) fs.writeSync(fd, randomFillSync(block));
    fs.closeSync(fd);
    fs.writeFileSync(path.join(context, 'Dockerfile'), 'FROM scratch\nCOPY payload.bin /payload.bin\n');
    await buildDockerfile({ contextDir: context, tag, docker });
    fs.rmSync(context, { recursive: true, force: true });

    const project = path.join(dir, 'project');
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, 'rivet.yaml'), `matchmaker:\n  docker:\n    image: ${tag}\n  game_modes:\n    default: {}\n`);
    const config = path.join(dir, 'emulator.json');
    fs.writeFileSync(config, JSON.stringify({ startDelayMs: 0, readyDelayMs: 0 }));
    serve = await startServe(['--data-dir', path.join(dir, 'data'), '--config', config]);
    const { info } = serve;
    const env = { ...process.env, HOME: dir, GAMEHOST_ENDPOINT: info.endpoint, GAMEHOST_TOKEN: info.tokens.cloud, GAMEHOST_GAME: info.game_id };
    // One of each first: the daemon's and the page cache's first reads are out of the measure.
    timed(['build', 'push', '--image', tag, '--tag', 'bench:warm', '-q', '--progress', 'none'], env, project);
    timed(['deploy', 'staging', '--name', 'warm', '-q'], env, project);
    const push = [];
    const deploy = [];
    for (let i = 0; i < RUNS; i++) {
      push.push(timed(['build', 'push', '--image', tag, '--tag', `bench:p${i}`, '-q', '--progress', 'none'], env, project));
      deploy.push(timed(['deploy', 'staging', '--name', `run-${i}`, '-q'], env, project));
    }
    const ratio = median(deploy) / median(push);
    const ok = ratio <= BUDGET;
    console.error(
      `deploy of a 100 MiB image: median ${median(deploy).toFixed(0)} ms, build push --image of it ${median(push).toFixed(0)} ms: ${ratio.toFixed(2)}x (budget ${BUDGET}x) ${ok ? 'ok' : 'OVER BUDGET'}`,
    );
    return ok;
  } finally {
    await serve?.stop();
    await docker.removeImage(tag, { force: true }).catch(() => {});
    await docker.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = (await runDeployBench()) ? 0 : 1;

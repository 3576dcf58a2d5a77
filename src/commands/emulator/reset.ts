// `gamehost emulator reset`: deletes the emulator's data (lobbies, builds, exports, the token secret), after ending
// the lobbies' servers that a killed `emulator serve` of the data directory left running (their only record goes).
import type { Context } from '../../context.js';
import { emulatorDir } from '../../config/paths.js';
import { ExitCode, RefusedError, UsageError } from '../../errors.js';
import { writeJson } from '../../output/json.js';
import { defineCommand } from '../command.js';
import { dataDirPath } from './local.js';

export interface ResetOptions {
  dataDir: string;
  yes: boolean;
}

export default defineCommand({
  summary: "Delete the emulator's lobbies, builds, exports and tokens",
  options: [
    { flags: '--yes', description: 'do not ask (required when stdin is not a terminal)' },
    { flags: '--data-dir <dir>', description: "the emulator's data directory (default: the embedded emulator's)" },
  ],
  examples: ['gamehost emulator reset', 'gamehost emulator reset --yes --data-dir .emulator   # in CI'],
  parse(v, ctx): ResetOptions {
    // A script cannot answer a prompt: it must say --yes, and nothing is touched until it does.
    if (!v.yes && (ctx.io.stdin.isTTY !== true || ctx.global.input === false)) {
      const why = ctx.global.input === false ? '--no-input forbids the prompt' : 'stdin is not a terminal';
      throw new UsageError(`emulator reset deletes the emulator data: pass --yes to confirm (${why})`);
    }
    return { dataDir: v.dataDir !== undefined ? dataDirPath(v.dataDir, ctx.cwd) : emulatorDir(ctx.env), yes: v.yes };
  },
  run,
});

/** One line from the terminal; an empty answer or end of input is "no"; Ctrl-C interrupts. */
async function ask(ctx: Context, question: string): Promise<boolean> {
  ctx.io.stderr.write(question);
  const { default: readline } = await import('node:readline');
  const rl = readline.createInterface({ input: ctx.io.stdin, terminal: false });
  let onAbort = () => {};
  try {
    const answer = await new Promise<string>((resolve, reject) => {
      onAbort = () => reject(ctx.signal.reason);
      if (ctx.signal.aborted) return onAbort();
      ctx.signal.addEventListener('abort', onAbort, { once: true });
      rl.once('line', resolve);
      rl.once('close', () => resolve(''));
    });
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
    rl.close();
  }
}

async function run(ctx: Context, o: ResetOptions): Promise<number | void> {
  const { dataDirHolders, resetDataDir } = await import('../../emulator/index.js');
  // Deleting the data under a running server would leave it serving lobbies that no longer exist anywhere.
  const holders = dataDirHolders(o.dataDir);
  if (holders.length > 0) {
    const which = holders.map((h) => `pid ${h.pid} at ${h.endpoint}`).join(', ');
    throw new RefusedError(
      `emulator serve (${which}) is using ${o.dataDir}; nothing was deleted`,
      `stop it first (Ctrl-C where it runs, or kill ${holders.map((h) => h.pid).join(' ')}), then reset`,
    );
  }
  if (!o.yes && !(await ask(ctx, `Delete every lobby, build, export and token of the emulator in ${o.dataDir}? [y/N] `))) {
    // Declined is not an error, but not done either: a script must be able to tell (as with `rm -i`).
    ctx.info('Nothing was deleted.');
    return ExitCode.UNEXPECTED;
  }
  // The servers a killed `serve --run` of this directory left, by its records, which go with the data: found by
  // nothing afterwards. And the containers a killed `serve --run-build` left, and its network, where Docker answers.
  const { sweepLeftovers } = await import('../../emulator/runtime/leftovers.js');
  const ended = await sweepLeftovers(o.dataDir);
  const { resetContainers } = await import('../../emulator/runtime/docker.js');
  const docker = await resetContainers(o.dataDir, ctx.env).catch((err: unknown) => {
    ctx.warn(`the emulator's containers and images could not be removed: ${(err as Error).message}`);
    return undefined;
  });
  const { containers = 0, images = 0 } = docker ?? {};
  const removed = resetDataDir(o.dataDir);
  if (ctx.global.json) return writeJson(ctx, { data_dir: o.dataDir, removed, containers, images, ended_servers: ended });
  if (ended > 0) ctx.info(`Ended ${ended} lobby ${ended === 1 ? 'server' : 'servers'} that a killed emulator serve left running.`);
  if (containers) ctx.info(`Removed ${containers} container(s) an emulator of ${o.dataDir} left.`);
  if (images) ctx.info(`Removed ${images} image(s) the emulator loaded for its builds.`);
  ctx.info(
    removed.length === 0
      ? `No emulator data in ${o.dataDir}; nothing to delete.`
      : `Deleted the emulator data in ${o.dataDir}; the next run starts afresh with new tokens.`,
  );
}

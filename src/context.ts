// Builds what every command receives: the base context (src/base-context.ts) and lazily built expensive things
// (the target, its API client, the in-process emulator), released by close().
import type { Agents } from './api/agents.js';
import type { ApiClient } from './api/client.js';
import type { BaseContext } from './base-context.js';
import type { LocalEmulator, Target } from './config/target.js';
import type { StartEmulatorOptions } from './emulator/index.js';
import { DEFAULT_RETRY, type RetryPolicy } from './shared/retry.js';
import { DEFAULT_GLOBALS, type GlobalOptions } from './globals.js';
import { eventLine } from './output/json.js';
import type { Env, IOStreams } from './shared/io.js';

/** What a command receives: the base every layer takes, and the expensive parts, built on first use. */
export interface Context extends BaseContext {
  /** Resolves where commands talk to (flags, env, profile, or the embedded emulator); built once, on first use. */
  target(): Promise<Target>;
  /** A client for the target. */
  api(): Promise<ApiClient>;
  /**
   * The in-process emulator, started on first use: without `dataDir` the embedded one that stands in for the
   * service (its settings from the environment, and a notice saying so); with it, one on that data directory,
   * for the emulator's own commands. On a data directory that a running `emulator serve` uses, that serve instead
   * (or a refusal naming it). One per context.
   */
  emulator(dataDir?: string): Promise<LocalEmulator>;
  /** A client for the in-process emulator on `dataDir`, whatever the target: the emulator's admin API. */
  emulatorApi(dataDir: string): Promise<ApiClient>;
  /** Releases what the lazy parts built: the connections, the in-process emulator. */
  close(): Promise<void>;
}

export interface ContextInit {
  io?: Partial<IOStreams>;
  env?: Env;
  cwd?: string;
  now?: () => number;
  retry?: RetryPolicy;
  signal?: AbortSignal;
}

export function createContext(init: ContextInit = {}, global: GlobalOptions = DEFAULT_GLOBALS, writes = false): Context {
  const io: IOStreams = {
    stdin: init.io?.stdin ?? process.stdin,
    stdout: init.io?.stdout ?? process.stdout,
    stderr: init.io?.stderr ?? process.stderr,
  };
  let target: Promise<Target> | undefined;
  let api: Promise<ApiClient> | undefined;
  let emulator: { dataDir?: string; running: Promise<LocalEmulator> } | undefined;
  let emulatorApi: Promise<ApiClient> | undefined;
  // The process's connections (one undici Agent, a ProxyAgent per proxy), shared by its clients.
  let agents: Promise<Agents> | undefined;
  const http = () => (agents ??= import('./api/agents.js').then((m) => new m.Agents(ctx.env, ctx.global.timeoutMs)));
  const ctx: Context = {
    io,
    env: init.env ?? process.env,
    cwd: init.cwd ?? process.cwd(),
    now: init.now ?? Date.now,
    retry: init.retry ?? DEFAULT_RETRY,
    signal: init.signal ?? new AbortController().signal,
    global,
    writes,
    target() {
      target ??= import('./config/target.js').then((m) => m.resolveTarget(ctx));
      return target;
    },
    api() {
      api ??= Promise.all([ctx.target(), import('./api/client.js'), http()]).then(async ([t, m, agents]) => {
        const client = new m.ApiClient(t, { ctx, agents });
        if (t.namespaceName === undefined) return client;
        // --namespace staging: its id, looked up in the game once.
        const { readGame, findNamespace } = await import('./api/resolve.js');
        const { namespace_id } = findNamespace(await readGame(client), t.namespaceName);
        return new m.ApiClient({ ...t, namespaceId: namespace_id.toLowerCase() }, { ctx, agents });
      });
      return api;
    },
    emulator(dataDir) {
      if (emulator) {
        if (emulator.dataDir !== dataDir) throw new Error(`one emulator per command: ${emulator.dataDir ?? 'the embedded one'} is already running`);
        return emulator.running;
      }
      emulator = { dataDir, running: startEmulator(ctx, dataDir) };
      return emulator.running;
    },
    emulatorApi(dataDir) {
      emulatorApi ??= Promise.all([ctx.emulator(dataDir), import('./api/client.js'), http()]).then(
        ([emu, m, agents]) => new m.ApiClient({ endpoint: emu.endpoint, embedded: true }, { ctx, agents }),
      );
      return emulatorApi;
    },
    async close() {
      // Connections first: the emulator's close waits for them otherwise.
      await (await agents?.catch(() => undefined))?.close();
      const running = await emulator?.running.catch(() => undefined);
      await running?.close();
    },
    notices: 'text',
    info(line) {
      if (ctx.global.quiet) return;
      io.stderr.write(ctx.notices === 'json' ? eventLine(ctx, { type: 'notice', message: line }) : line + '\n');
    },
    warn(line) {
      io.stderr.write(ctx.notices === 'json' ? eventLine(ctx, { type: 'warning', message: line }) : 'warning: ' + line + '\n');
    },
    verbose(line) {
      if (ctx.global.verbose) io.stderr.write(line + '\n');
    },
  };
  return ctx;
}

/** The serve that runs on `dataDir`, said once a shell session (and with --verbose); undefined when none does. */
async function servedEmulator(ctx: Context, dataDir: string): Promise<LocalEmulator | undefined> {
  const { servingEmulator } = await import('./emulator/serving.js');
  const served = await servingEmulator(dataDir);
  if (served === undefined) return undefined;
  const line = `Using the emulator that \`gamehost emulator serve\` (pid ${served.pid}) runs at ${served.endpoint} on ${dataDir}.`;
  ctx.verbose(line);
  if (!ctx.global.verbose && !ctx.global.quiet && !ctx.global.json) {
    const { firstInSession } = await import('./config/notice-once.js');
    if (firstInSession(ctx.env, `serve-${served.pid}`, ctx.now())) ctx.info(line);
  }
  // Nothing of it is this command's to close.
  return { ...served, close: async () => {} };
}

/** What the embedded emulator was refused at its start, said in one line; anything else stays an unexpected failure. */
async function refusedStart(err: unknown): Promise<never> {
  if (!(err instanceof Error)) throw err;
  const { RefusedError } = await import('./errors.js');
  // runBuild in GAMEHOST_EMULATOR_CONFIG, and no Docker: what the config asks cannot be done.
  if (err.name === 'RunnerError') throw new RefusedError(`the embedded emulator's runBuild: ${err.message}`, 'start Docker, or take runBuild out of GAMEHOST_EMULATOR_CONFIG');
  // A data directory a newer gamehost migrated: refused before anything was written to it.
  if (err.name === 'SchemaTooNewError') throw new RefusedError(err.message);
  throw err;
}

async function startEmulator(ctx: Context, dataDir: string | undefined): Promise<LocalEmulator> {
  // The emulator's modules only when this process runs it: a command answered by a serve loads none of them.
  // What a serve's operator reads on its stderr (a store that does not answer, an internal error) is this command's
  // --verbose: the command says its own error in its own line.
  const operatorLog = (message: string) => ctx.verbose(`emulator: ${message}`);
  const start = async (options: StartEmulatorOptions) =>
    (await import('./emulator/index.js')).startEmulator({ ...options, operatorLog }).catch(refusedStart);
  if (dataDir !== undefined) return (await servedEmulator(ctx, dataDir)) ?? start({ dataDir });
  const { embeddedEmulatorOptions } = await import('./config/target.js');
  const options = await embeddedEmulatorOptions(ctx);
  const served = await servedEmulator(ctx, options.dataDir);
  if (served !== undefined) return served;
  const emu = await start({ ...options, env: ctx.env });
  // For a person, once per shell session (an hour at most); never in a script's -q or --json.
  if (!ctx.global.quiet && !ctx.global.json) {
    const { firstInSession } = await import('./config/notice-once.js');
    if (firstInSession(ctx.env, 'embedded-emulator', ctx.now())) ctx.info('Using the local emulator; pass --endpoint (or set GAMEHOST_ENDPOINT) for a real service.');
  }
  ctx.verbose(`emulator data: ${options.dataDir}`);
  return emu;
}

// `gamehost emulator lobby env <lobby-id>`: the environment production gives a lobby's process, for a game server
// started by hand (or in a debugger) against a running emulator: `eval "$(gamehost emulator lobby env $LOBBY)"`.
import { emulatorLobbyEnv } from '../../api/operations.js';
import type { Context } from '../../context.js';
import { ApiError, CliError, ExitCode, UsageError } from '../../errors.js';
import { writeJson } from '../../output/json.js';
import { parseChoice, parseLobbyId } from '../args.js';
import { defineCommand } from '../command.js';
import { adminApi, emulatorPlace, exportLines } from './local.js';

const SHELLS = ['posix', 'powershell'] as const;
type Shell = (typeof SHELLS)[number];

export interface LobbyEnvOptions {
  lobbyId: string;
  shell: Shell;
}

/** `$env:NAME = 'value'` lines for PowerShell: single quotes, each ' doubled. */
export function powershellLines(vars: [name: string, value: string][]): string {
  return vars.map(([k, v]) => `$env:${k} = '${v.replace(/'/g, "''")}'\n`).join('');
}

export default defineCommand({
  operands: ['<lobby-id>'],
  summary: "Print a lobby's environment (RIVET_TOKEN, PORT_default, ...) for a server started by hand",
  options: [{ flags: '--shell <shell>', description: 'posix (export lines, the default) or powershell ($env: lines)', default: 'posix' }],
  notes:
    'Needs a running emulator (emulator serve; --endpoint or GAMEHOST_ENDPOINT): the variables point the server at it. ' +
    'PORT_<label> are the ports find and join give clients. With emulator serve --readiness manual the lobby waits ' +
    "for the server's ready call. --json prints one object of the variables.",
  examples: [
    'eval "$(gamehost emulator lobby env "$LOBBY")" && ./my-game-server',
    'gamehost emulator lobby env "$LOBBY" --shell powershell | Invoke-Expression   # PowerShell',
    'gamehost emulator lobby env "$LOBBY" --json > lobby-env.json   # in CI',
  ],
  parse(v, ctx): LobbyEnvOptions {
    const lobbyId = parseLobbyId(v.lobbyId);
    const shell = parseChoice('--shell', v.shell, SHELLS);
    if (emulatorPlace(undefined, ctx).kind !== 'endpoint')
      throw new UsageError(
        'emulator lobby env needs a running emulator: give --endpoint (or GAMEHOST_ENDPOINT)',
        'start one with `gamehost emulator serve --readiness manual`; an embedded emulator ends with the command',
      );
    return { lobbyId, shell };
  },
  run,
});

/** The lobby has stopped: there is no server to start with its environment (exit 4, as a lobby that is not there). */
class LobbyStoppedError extends CliError {
  readonly exitCode = ExitCode.NOT_FOUND;
  constructor(lobbyId: string) {
    super(`lobby ${lobbyId} has stopped: no server is to start with its environment; make a new lobby`);
    this.name = 'LobbyStoppedError';
  }
}

async function run(ctx: Context, o: LobbyEnvOptions): Promise<void> {
  const api = (await adminApi(ctx, { kind: 'endpoint' }))!;
  const { env } = await emulatorLobbyEnv(api, o.lobbyId).catch((err: unknown) => {
    throw err instanceof ApiError && err.code === 'MATCHMAKER_LOBBY_STOPPED' ? new LobbyStoppedError(o.lobbyId) : err;
  });
  if (ctx.global.json) return writeJson(ctx, env);
  const vars = Object.entries(env);
  ctx.io.stdout.write(o.shell === 'powershell' ? powershellLines(vars) : exportLines(vars));
}

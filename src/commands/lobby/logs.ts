import type { Context } from '../../context.js';
import { getLobbyLogs } from '../../api/operations.js';
import { UsageError } from '../../errors.js';
import { writeJson } from '../../output/json.js';
import { renderLobbyLogs } from '../../output/views/lobby.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface LogsOptions {
  lobbyId: string;
}

export function parse(args: string[]): LogsOptions {
  const lobbyId = args[0]!.trim();
  if (!UUID.test(lobbyId)) throw new UsageError(`<lobby-id> must be a UUID, not "${args[0]}"`);
  return { lobbyId: lobbyId.toLowerCase() };
}

export async function run(ctx: Context, options: LogsOptions): Promise<void> {
  const logs = await getLobbyLogs(await ctx.api(), options.lobbyId);
  if (ctx.global.json) return writeJson(ctx, logs);
  ctx.io.stdout.write(renderLobbyLogs(ctx, logs));
}

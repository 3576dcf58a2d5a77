// `gamehost lobby stop <lobby-id>`: stops a lobby now, on the service (deleteMatchmakerLobby). The emulator's
// `emulator lobby stop` stays for what only it can do (an exit code, a failed stop).
import type { Context } from '../../context.js';
import { parseLobbyId } from '../args.js';
import { defineCommand } from '../command.js';

export interface LobbyStopOptions {
  lobbyId: string;
}

export default defineCommand({
  writes: true,
  operands: ['<lobby-id>'],
  summary: 'Stop a lobby now',
  notes: 'Stopping a lobby that had already stopped changes nothing and says so. With -q, prints the lobby id alone.',
  examples: [
    'gamehost lobby stop "$LOBBY"',
    'gamehost lobby stop "$LOBBY" --json | jq .did_remove   # in CI',
  ],
  parse: (v): LobbyStopOptions => ({ lobbyId: parseLobbyId(v.lobbyId) }),
  run,
});

async function run(ctx: Context, o: LobbyStopOptions): Promise<void> {
  const [{ deleteLobby }, { writeJsonText }] = await Promise.all([import('../../api/operations.js'), import('../../output/json.js')]);
  const answer = await deleteLobby(await ctx.api(), o.lobbyId);
  if (ctx.global.json) return writeJsonText(ctx, answer.text);
  const removed = answer.value?.did_remove;
  if (ctx.global.quiet) return void ctx.io.stdout.write(o.lobbyId + '\n');
  // did_remove false: the lobby had already stopped. Absent (the spec does not require it): stopped, as asked.
  const { renderRecord } = await import('../../output/record.js');
  ctx.io.stdout.write(
    renderRecord(ctx, [
      { label: 'Lobby', key: 'lobby_id', value: o.lobbyId },
      { label: 'Stopped', key: 'stopped', value: removed === false ? 'already (nothing changed)' : 'now' },
    ]),
  );
}

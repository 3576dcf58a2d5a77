// gamehost login with a cloud token alone: the game is the token's (GET /cloud/auth/inspect), the namespace is
// picked from the game's (GET /cloud/games/{game_id}) by name, the only one, or asked on a terminal.
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { isolatedEnv, runCli } from '../helpers/cli.js';
import { useEmulator } from '../helpers/emulator.js';
import { BIN } from '../helpers/bin.js';

const GAME = '11111111-1111-4111-8111-111111111111';
const PROD = '22222222-2222-4222-8222-222222222222';
const STAGING = '33333333-3333-4333-8333-333333333333';

/** A service with a game of two namespaces and nothing else: what login reads, with ids fixed. */
async function twoNamespaces() {
  const server = http.createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    if (req.url === '/cloud/auth/inspect') return res.end(JSON.stringify({ agent: { game_cloud: { game_id: GAME } } }));
    if (req.url === `/cloud/games/${GAME}`) {
      return res.end(JSON.stringify({ game: { game_id: GAME, available_regions: [], namespaces: [{ namespace_id: PROD, name_id: 'prod', display_name: 'Production' }, { namespace_id: STAGING, name_id: 'staging', display_name: 'Staging' }] } }));
    }
    res.writeHead(404).end(JSON.stringify({ code: 'API_NOT_FOUND', message: 'not found' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((resolve) => server.close(resolve)) };
}

const profileOf = async (env: Record<string, string | undefined>) => JSON.parse((await runCli(['profile', 'show', '--json'], { env })).stdout);

describe('login with a cloud token alone', () => {
  const fx = useEmulator();

  it("finds the token's game at the emulator, and its namespace by name (prod and staging, as every game starts with)", async () => {
    const env = isolatedEnv();
    const r = await runCli(['login', '--endpoint', fx.emu.endpoint, '--token-stdin', '--no-input'], { env, stdin: fx.emu.tokens.cloud + '\n' });
    expect([r.code, r.stderr]).toEqual([2, 'error: the game has 2 namespaces (prod, staging): say which with --namespace <name>\n']);
    const named = await runCli(['login', '--profile', 'p2', '--endpoint', fx.emu.endpoint, '--namespace', 'prod', '--token-stdin', '--no-input'], { env, stdin: fx.emu.tokens.cloud + '\n' });
    expect(named.code, named.stderr).toBe(0);
    expect(named.stderr).not.toContain('No game or namespace id saved');
    expect(await profileOf({ ...env, GAMEHOST_PROFILE: 'p2' })).toMatchObject({ game: fx.emu.gameId, namespace: fx.emu.namespaceId });
    const unknown = await runCli(['login', '--profile', 'p3', '--endpoint', fx.emu.endpoint, '--namespace', 'qa', '--token-stdin', '--no-input'], { env, stdin: fx.emu.tokens.cloud + '\n' });
    expect([unknown.code, unknown.stderr]).toEqual([2, 'error: the game has no namespace "qa"; it has prod, staging\n']);
  });

  it('with several namespaces: --namespace by name elsewhere, or the name asked for on a terminal', async () => {
    const svc = await twoNamespaces();
    try {
      const env = { ...isolatedEnv(), GAMEHOST_INSECURE: undefined };
      const base = ['login', '--endpoint', svc.endpoint, '--token-stdin', '--no-input'];
      const piped = await runCli(base, { env, stdin: 'cloud.x.y\n' });
      expect([piped.code, piped.stderr]).toEqual([2, 'error: the game has 2 namespaces (prod, staging): say which with --namespace <name>\n']);
      const named = await runCli([...base, '--namespace', 'staging'], { env, stdin: 'cloud.x.y\n' });
      expect(named.code).toBe(0);
      expect(await profileOf(env)).toMatchObject({ game: GAME, namespace: STAGING });

      // On a terminal: the hidden token prompts, then the namespace by name, each typed after its question.
      const home = isolatedEnv();
      const child = spawn('script', ['-qec', `"${process.execPath}" "${BIN}" login --profile t --endpoint ${svc.endpoint}`, '/dev/null'], {
        env: { PATH: process.env.PATH, ...home },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let seen = '';
      const answers: [string, string][] = [['Cloud token', 'cloud.x.y\r'], ['Namespace token', '\r'], ['Namespace (prod, staging): ', 'prod\r']];
      child.stdout!.on('data', (d: Buffer) => {
        seen += d.toString();
        while (answers.length && seen.includes(answers[0]![0])) child.stdin!.write(answers.shift()![1]);
      });
      const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
      expect(seen).toContain('Namespace (prod, staging): ');
      expect(code).toBe(0);
      expect(await profileOf({ ...home, GAMEHOST_PROFILE: 't' })).toMatchObject({ game: GAME, namespace: PROD });
    } finally {
      await svc.close();
    }
  });
});

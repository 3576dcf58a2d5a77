// `gamehost token create public|development`: a namespace token for a game client (public) or for running a game
// server on your machine against mock answers (development), for the namespace --namespace names (default: the
// profile's).
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { defineCommand } from '../command.js';

interface TokenOptions {
  kind: 'public' | 'development';
  hostname: string;
  ports: Record<string, { port: number; protocol: string }>;
}

const PROTOCOLS = ['http', 'https', 'tcp', 'tcp_tls', 'udp'];

export default defineCommand({
  writes: true,
  operands: ['<kind>'],
  summary: 'Create a public or development namespace token',
  options: [
    { flags: '--hostname <host>', description: "development: the host your game server runs on (default: 127.0.0.1)" },
    { flags: '--port <label=port[/protocol]>', description: 'development: a port of your game server (repeatable; protocol default http)', repeatable: true },
  ],
  notes:
    'kind is public (pub) or development (dev). The namespace is --namespace (a name id such as staging, or an id), else the profile\'s. ' +
    'Prints the token alone, for a pipe or a variable; it is a secret: keep it out of logs.',
  examples: ['gamehost token create public --namespace prod', 'gamehost token create development --namespace staging --port default=7777/udp', 'export RIVET_TOKEN=$(gamehost token create dev)   # in CI: a local server\'s token'],
  parse(v): TokenOptions {
    const kind = ({ public: 'public', pub: 'public', development: 'development', dev: 'development' } as const)[v.kind as 'public'];
    if (kind === undefined) throw new UsageError(`token kind must be public or development, not "${v.kind}"`);
    if (kind === 'public' && (v.hostname !== undefined || v.port !== undefined)) throw new UsageError('--hostname and --port are for a development token');
    const ports: TokenOptions['ports'] = {};
    for (const spec of v.port ?? []) {
      const m = /^([0-9a-z-]{1,16})=(\d{1,5})(?:\/([a-z_]+))?$/.exec(spec);
      const port = Number(m?.[2]);
      if (!m || port < 1 || port > 65535 || !PROTOCOLS.includes(m[3] ?? 'http')) {
        throw new UsageError(`--port must be label=port[/protocol], protocol one of ${PROTOCOLS.join(', ')}, not "${spec}"`, 'e.g. --port default=7777/udp');
      }
      if (ports[m[1]!]) throw new UsageError(`--port names "${m[1]}" twice`);
      ports[m[1]!] = { port, protocol: m[3] ?? 'http' };
    }
    return { kind, hostname: v.hostname ?? '127.0.0.1', ports };
  },
  run,
});

async function run(ctx: Context, o: TokenOptions): Promise<void> {
  const { createNamespaceToken } = await import('../../api/operations.js');
  const api = await ctx.api();
  const namespaceId = api.namespaceId();
  const body = o.kind === 'development' ? { hostname: o.hostname, ...(Object.keys(o.ports).length > 0 ? { ports: o.ports } : {}) } : undefined;
  const { token } = await createNamespaceToken(api, namespaceId, o.kind, body);
  if (typeof token !== 'string' || token === '') throw new UsageError('the service answered no token');
  if (ctx.global.json) {
    const { writeJson } = await import('../../output/json.js');
    return writeJson(ctx, { kind: o.kind, namespace_id: namespaceId, token });
  }
  ctx.io.stdout.write(token + '\n');
}

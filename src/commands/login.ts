// `gamehost login`: saves an endpoint, its tokens and ids as a named profile. Tokens come from a hidden prompt
// on a terminal or from stdin, never from flags (flags end up in shell history and process lists).
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import type { Profile } from '../config/profiles.js';
import { defineCommand } from './command.js';

/** The production service, as the official CLI's default. */
export const DEFAULT_ENDPOINT = 'https://api.rivet.gg';

export interface LoginOptions {
  name: string;
  endpoint: string;
  game?: string;
  /** A namespace UUID, or its name id (`prod`), looked up in the game's namespaces. */
  namespace?: string;
  tokenStdin: boolean;
  namespaceTokenStdin: boolean;
}

export default defineCommand({
  summary: 'Save an endpoint, tokens and ids as a profile',
  options: [
    { flags: '--token-stdin', description: 'read the cloud token from stdin (default: a hidden prompt on a terminal)' },
    { flags: '--namespace-token-stdin', description: 'read the namespace token from stdin, after the cloud token when both are asked for' },
  ],
  notes:
    'Saves the profile named by --profile or GAMEHOST_PROFILE, else "default": the\n' +
    'endpoint (--endpoint; default: https://api.rivet.gg), --game, --namespace and\n' +
    'the tokens, in config.json in the config directory (mode 0600). Tokens are\n' +
    'never flags: on a terminal login asks for the cloud token, then the namespace\n' +
    'token, unechoed. Without a namespace token, lobby create and stats make one\n' +
    'with the cloud token (given --game and --namespace) and keep it in the state\n' +
    'directory. The first profile saved becomes the current one. With a cloud\n' +
    'token and no --game, the game is the token\'s and the namespace is picked by\n' +
    'name (--namespace prod, the only one, or asked on a terminal).',
  examples: [
    'gamehost login --endpoint api.rivet.gg --game "$GAME_ID" --namespace "$NAMESPACE_ID"',
    'gamehost login --profile staging --endpoint https://staging.example.com',
    'printf \'%s\\n%s\\n\' "$CLOUD_TOKEN" "$NS_TOKEN" | gamehost login --token-stdin --namespace-token-stdin --no-input   # in CI',
  ],
  async parse(v, ctx): Promise<LoginOptions> {
    const [{ normalizeEndpoint }, { DEFAULT_PROFILE, validateProfileName }, { assertCanPrompt }, { parseUuid }] = await Promise.all([
      import('../config/endpoint.js'),
      import('../config/profiles.js'),
      import('../config/prompt.js'),
      import('./args.js'),
    ]);
    const g = ctx.global;
    const env = ctx.env;
    if (g.profile === false) throw new UsageError('--no-profile cannot go with login', 'name the profile with --profile <name>');
    if (g.token !== undefined || g.namespaceToken !== undefined) {
      throw new UsageError(
        'login does not take tokens as flags (they would end up in your shell history)',
        "type them at the prompt, or pipe them: printf '%s\\n' \"$TOKEN\" | gamehost login --token-stdin",
      );
    }
    const name = g.profile !== undefined ? validateProfileName(g.profile, '--profile') : env.GAMEHOST_PROFILE ? validateProfileName(env.GAMEHOST_PROFILE, 'GAMEHOST_PROFILE') : DEFAULT_PROFILE;
    // What is saved is what was passed: the environment is for one shell, a profile outlives it.
    const options: LoginOptions = {
      name,
      endpoint: normalizeEndpoint(g.endpoint ?? DEFAULT_ENDPOINT, g.insecureHttp),
      game: g.game === undefined ? undefined : parseUuid('--game', g.game),
      // A UUID, or a name id (prod) that login looks up in the game's namespaces.
      namespace: g.namespace === undefined ? undefined : UUID.test(g.namespace.trim()) ? parseUuid('--namespace', g.namespace) : nameId(g.namespace),
      tokenStdin: v.tokenStdin,
      namespaceTokenStdin: v.namespaceTokenStdin,
    };
    if (!options.tokenStdin && !options.namespaceTokenStdin) {
      assertCanPrompt(ctx, 'login', '--token-stdin (and --namespace-token-stdin) with the tokens piped in, one a line');
    }
    return options;
  },
  run,
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function nameId(raw: string): string {
  const name = raw.trim();
  if (!/^[a-z0-9][a-z0-9-]{0,63}$/i.test(name)) throw new UsageError(`--namespace must be a namespace's name id (such as prod) or its UUID, not "${raw}"`);
  return name;
}

/**
 * With a cloud token and no game id, the game is the token's (cloud.auth.inspect), and the namespace is picked
 * from the game's by name: --namespace prod (or its UUID), the only one, or asked on a terminal. Nobody copies UUIDs.
 */
async function discover(ctx: Context, o: LoginOptions, token: string, known: { game?: string; namespace?: string }): Promise<{ game?: string; namespace?: string }> {
  const namespaceIsId = o.namespace !== undefined && UUID.test(o.namespace);
  if ((o.game ?? known.game) !== undefined && (o.namespace === undefined || namespaceIsId)) return { game: o.game, namespace: o.namespace };
  const [{ ApiClient }, { Agents }, { getGame, inspectToken }] = await Promise.all([import('../api/client.js'), import('../api/agents.js'), import('../api/operations.js')]);
  const agents = new Agents(ctx.env, ctx.global.timeoutMs);
  try {
    let game = o.game ?? known.game;
    if (game === undefined) {
      const who = await inspectToken(new ApiClient({ endpoint: o.endpoint, cloudToken: token, embedded: false }, { ctx, agents }));
      game = who?.agent?.game_cloud?.game_id;
      if (typeof game !== 'string' || !UUID.test(game)) {
        throw new UsageError('this cloud token names no game (it is not the cloud token of a game)', 'pass --game <id> and --namespace <id>');
      }
      game = game.toLowerCase();
    }
    if (namespaceIsId) return { game, namespace: o.namespace };
    const answer = await getGame(new ApiClient({ endpoint: o.endpoint, cloudToken: token, embedded: false, gameId: game }, { ctx, agents }));
    const namespaces = (Array.isArray(answer?.game?.namespaces) ? answer.game.namespaces : []).filter(
      (n) => typeof n?.namespace_id === 'string' && UUID.test(n.namespace_id) && typeof n.name_id === 'string',
    );
    const { sanitizeLine } = await import('../output/sanitize.js');
    const names = namespaces.map((n) => sanitizeLine(n.name_id)).join(', ') || 'none';
    let wanted = o.namespace;
    if (wanted === undefined) {
      if (namespaces.length === 1) return { game, namespace: namespaces[0]!.namespace_id.toLowerCase() };
      if (namespaces.length === 0) return { game };
      if (ctx.io.stdin.isTTY !== true || ctx.global.input === false) {
        throw new UsageError(`the game has ${namespaces.length} namespaces (${names}): say which with --namespace <name>`);
      }
      wanted = await ask(ctx, `Namespace (${names}): `);
    }
    const found = namespaces.find((n) => n.name_id.toLowerCase() === wanted!.toLowerCase() || n.namespace_id.toLowerCase() === wanted!.toLowerCase());
    if (!found) throw new UsageError(`the game has no namespace "${sanitizeLine(wanted)}"; it has ${names}`);
    return { game, namespace: found.namespace_id.toLowerCase() };
  } finally {
    await agents.close();
  }
}

/** One visible line from the terminal. */
async function ask(ctx: Context, question: string): Promise<string> {
  const { default: readline } = await import('node:readline');
  const rl = readline.createInterface({ input: ctx.io.stdin, output: ctx.io.stderr, terminal: false });
  ctx.io.stderr.write(question);
  try {
    return await new Promise<string>((resolve, reject) => {
      const onAbort = () => reject(ctx.signal.reason);
      ctx.signal.addEventListener('abort', onAbort, { once: true });
      rl.once('line', (line) => resolve(line.trim()));
      rl.once('close', () => resolve(''));
    });
  } finally {
    rl.close();
  }
}

interface Tokens {
  token?: string;
  namespace_token?: string;
}

async function readTokens(ctx: Context, o: LoginOptions): Promise<Tokens> {
  const { promptHidden, readStdinLines } = await import('../config/prompt.js');
  if (!o.tokenStdin && !o.namespaceTokenStdin) {
    const [token, namespaceToken] = await promptHidden(ctx, [
      `Cloud token for ${o.endpoint} (Enter to skip): `,
      'Namespace token (Enter to have one made with the cloud token): ',
    ]);
    return { token: token || undefined, namespace_token: namespaceToken || undefined };
  }
  const wanted = [o.tokenStdin && 'the cloud token', o.namespaceTokenStdin && 'the namespace token'].filter((w): w is string => !!w);
  const lines = await readStdinLines(ctx);
  if (lines.length !== wanted.length) {
    throw new UsageError(
      `stdin holds ${lines.length} line${lines.length === 1 ? '' : 's'}; expected ${wanted.join(', then ')}, one a line`,
    );
  }
  const tokens: Tokens = {};
  if (o.tokenStdin) tokens.token = lines.shift();
  if (o.namespaceTokenStdin) tokens.namespace_token = lines.shift();
  for (const [which, value] of Object.entries(tokens)) if (!value) throw new UsageError(`the ${which.replace('_', ' ')} line of stdin is empty`);
  return tokens;
}

/** A token is one word of printable characters; its kind label (cloud, pub_…, dev_…) should match its use. */
function checkTokens(ctx: Context, tokens: Tokens): void {
  for (const [which, value] of Object.entries(tokens) as [keyof Tokens, string | undefined][]) {
    if (value === undefined) continue;
    // eslint-disable-next-line no-control-regex
    if (/[\s\x00-\x1f\x7f]/.test(value)) throw new UsageError(`the ${which === 'token' ? 'cloud' : 'namespace'} token holds spaces or control characters`);
    const label = value.includes('.') ? value.slice(0, value.indexOf('.')) : '';
    if (which === 'token' && /^(pub|dev)_/.test(label)) {
      ctx.warn('the cloud token looks like a namespace token (pub_… or dev_…); builds, logs and history need a cloud token');
    }
    if (which === 'namespace_token' && label === 'cloud') {
      ctx.warn('the namespace token looks like a cloud token; lobby create and stats want a namespace token (pub_…)');
    }
  }
  if (!tokens.token && !tokens.namespace_token) throw new UsageError('no token given: login needs a cloud token, a namespace token, or both');
}

async function run(ctx: Context, o: LoginOptions): Promise<void> {
  const [{ configFile, updateProfiles }, { redactToken }, { writeJson }] = await Promise.all([
    import('../config/profiles.js'),
    import('../shared/redact.js'),
    import('../output/json.js'),
  ]);
  const tokens = await readTokens(ctx, o);
  checkTokens(ctx, tokens);
  // The game and namespace the cloud token leads to, where they were not given as ids.
  if (tokens.token !== undefined) {
    const { readProfiles } = await import('../config/profiles.js');
    const previous = (await readProfiles(ctx)).profiles[o.name];
    const kept: { game?: string; namespace?: string } = previous && previous.endpoint === o.endpoint ? previous : {};
    // A service that cannot be asked (offline, a token it refuses) costs the ids, not the login: the tokens are saved.
    const found = await discover(ctx, o, tokens.token, { game: kept.game, namespace: kept.namespace }).catch((err: unknown) => {
      if (err instanceof UsageError || ctx.signal.aborted) throw err;
      ctx.warn(`could not ask ${o.endpoint} for the token's game and namespace (${(err as Error).message})`);
      return { game: o.game, namespace: o.namespace !== undefined && UUID.test(o.namespace) ? o.namespace : undefined };
    });
    o = { ...o, game: found.game ?? o.game, namespace: found.namespace };
  } else if (o.namespace !== undefined && !UUID.test(o.namespace)) {
    throw new UsageError('--namespace by name needs the cloud token, to look the name up', 'give the namespace\'s UUID, or log in with a cloud token');
  }
  let madeCurrent = false;
  let saved: Profile | undefined;
  const data = await updateProfiles(ctx, (data) => {
    const previous = data.profiles[o.name];
    // Logging in again to the same endpoint keeps the game and namespace unless new ones are given.
    const keep = previous && previous.endpoint === o.endpoint ? previous : undefined;
    saved = { endpoint: o.endpoint, ...tokens };
    const game = o.game ?? keep?.game;
    const namespace = o.namespace ?? keep?.namespace;
    if (game) saved.game = game;
    if (namespace) saved.namespace = namespace;
    madeCurrent = !data.current || !data.profiles[data.current];
    return { current: madeCurrent ? o.name : data.current, profiles: { ...data.profiles, [o.name]: saved } };
  });
  const profile = saved!;
  if (ctx.global.json) {
    return writeJson(ctx, {
      profile: o.name,
      endpoint: profile.endpoint,
      game: profile.game ?? null,
      namespace: profile.namespace ?? null,
      token: profile.token ? redactToken(profile.token) : null,
      namespace_token: profile.namespace_token ? redactToken(profile.namespace_token) : null,
      current: data.current === o.name,
      config_file: configFile(ctx.env),
    });
  }
  ctx.info(`Saved profile "${o.name}" for ${profile.endpoint} in ${configFile(ctx.env)}.`);
  if (data.current === o.name) {
    ctx.info(madeCurrent ? `It is now the current profile.` : `It is the current profile.`);
  } else {
    ctx.info(`The current profile is still "${data.current}": run \`gamehost profile use ${o.name}\`, or pass --profile ${o.name}.`);
  }
  const missing = [!profile.game && 'game', !profile.namespace && 'namespace'].filter((m): m is string => !!m);
  if (profile.token && missing.length) {
    const nsToken = profile.namespace_token ? '' : '; lobby create and stats need both, to make a namespace token with the cloud token';
    ctx.info(
      `No ${missing.join(' or ')} id saved (builds, logs and history need the game id, lobby logs the namespace id${nsToken}): ` +
        `log in again with ${missing.map((m) => `--${m} <id>`).join(' ')}.`,
    );
  }
  const shadowing = ['GAMEHOST_ENDPOINT', 'RIVET_API_ENDPOINT', 'GAMEHOST_TOKEN', 'RIVET_TOKEN', 'GAMEHOST_NAMESPACE_TOKEN'].filter((v) => ctx.env[v]);
  if (shadowing.length) ctx.warn(`${shadowing.join(', ')} ${shadowing.length === 1 ? 'is' : 'are'} set in this environment and win${shadowing.length === 1 ? 's' : ''} over the profile`);
}

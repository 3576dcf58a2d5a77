// Where a command talks to, and with which credentials: flag > environment > selected profile > embedded
// emulator, value by value. A profile's tokens and ids go only to the profile's own endpoint. `--endpoint embedded`
// (GAMEHOST_ENDPOINT=embedded) asks for the embedded emulator by name: in CI, a command that changes what the service
// holds gets it only so, never because no endpoint was set. This only resolves values: the embedded emulator is the
// context's to start and stop (ctx.emulator()).
import type { BaseContext } from '../base-context.js';
import { UsageError } from '../errors.js';
import { ciVariable } from '../output/ci.js';
import { NAME_ID, UUID, parseUuid } from '../uuid.js';
import { normalizeEndpoint } from './endpoint.js';
import { emulatorDir } from './paths.js';
import { readProfiles, selectProfile, type Profile } from './profiles.js';
import { redactToken } from '../shared/redact.js';
import type { RunningEmulator, StartEmulatorOptions } from '../emulator/index.js';

export interface Target {
  endpoint: string;
  cloudToken?: string;
  namespaceToken?: string;
  gameId?: string;
  namespaceId?: string;
  /** A namespace named by its name id (`--namespace staging`): the context looks its id up in the game. */
  namespaceName?: string;
  /** True when the command runs against the in-process emulator. */
  embedded: boolean;
  /** For the embedded emulator, where a cloud token the user gave came from (`GAMEHOST_TOKEN`): its 401 names it. */
  cloudTokenFrom?: string;
}

/** What a command uses of the emulator it opened, or of the serve that runs on its data directory. */
export type LocalEmulator = Pick<RunningEmulator, 'endpoint' | 'gameId' | 'namespaceId' | 'tokens' | 'close'>;

/** What resolving a target takes: the base context, and the context's embedded emulator, started on first use. */
export interface TargetContext extends BaseContext {
  emulator(): Promise<LocalEmulator>;
}

/** The endpoint that names the embedded emulator, for `--endpoint` and GAMEHOST_ENDPOINT. */
export const EMBEDDED = 'embedded';

/** A value and where it came from (`--token`, `GAMEHOST_TOKEN`, `profile "ci"`, `emulator`), for --verbose. */
interface Sourced {
  value: string;
  from: string;
}

/** How --verbose names a namespace token made with the cloud token when a matchmaker call needs one. */
const MADE: Sourced = { value: '', from: 'made with the cloud token when needed' };

/** The first candidate that has a value; flags count even when empty, environment variables only when set. */
function first(...candidates: [value: string | undefined, from: string][]): Sourced | undefined {
  for (const [value, from] of candidates) if (value !== undefined && (value !== '' || from.startsWith('--'))) return { value, from };
  return undefined;
}

function describe(endpoint: Sourced, cloud?: Sourced, ns?: Sourced, game?: Sourced, namespace?: Sourced): string {
  const part = (label: string, s: Sourced | undefined, show: (v: string) => string) => `${label} ${s ? `${show(s.value)} (${s.from})` : 'none'}`;
  return [
    part('target', endpoint, (v) => v),
    part('cloud token', cloud, redactToken),
    part('namespace token', ns, redactToken),
    part('game', game, (v) => v),
    part('namespace', namespace, (v) => v),
  ].join('; ');
}

export async function resolveTarget(ctx: TargetContext): Promise<Target> {
  const g = ctx.global;
  const env = ctx.env;
  const endpointGiven = first([g.endpoint, '--endpoint'], [env.GAMEHOST_ENDPOINT, 'GAMEHOST_ENDPOINT'], [env.RIVET_API_ENDPOINT, 'RIVET_API_ENDPOINT']);
  const selected = g.profile === false ? undefined : selectProfile(ctx, await readProfiles(ctx));

  // The profile applies when it supplies the endpoint, or when the endpoint given is the profile's own.
  let profile: Profile | undefined;
  let endpoint: Sourced | undefined;
  const fromProfile = selected ? `profile "${selected.name}"` : '';
  const embeddedAsked = endpointGiven?.value.trim().toLowerCase() === EMBEDDED;
  if (embeddedAsked) {
    if (selected) ctx.verbose(`${endpointGiven!.from} asks for the embedded emulator, so ${fromProfile} is not used`);
  } else if (endpointGiven) {
    endpoint = { value: normalizeEndpoint(endpointGiven.value, g.insecureHttp), from: endpointGiven.from };
    if (selected) {
      if (sameEndpoint(selected.profile.endpoint, endpoint.value)) profile = selected.profile;
      else {
        const note = `${endpointGiven.from} overrides the endpoint of ${fromProfile}, so its tokens and ids are not used`;
        if (selected.via === 'current') ctx.verbose(note);
        else ctx.warn(note);
      }
    }
  } else if (selected) {
    profile = selected.profile;
    endpoint = { value: normalizeEndpoint(profile.endpoint, g.insecureHttp), from: fromProfile };
  }

  const cloud = first([g.token, '--token'], [env.GAMEHOST_TOKEN, 'GAMEHOST_TOKEN'], [env.RIVET_TOKEN, 'RIVET_TOKEN'], [profile?.token, fromProfile]);
  const game = first([g.game, '--game'], [env.GAMEHOST_GAME, 'GAMEHOST_GAME'], [profile?.game, fromProfile]);
  const namespace = first([g.namespace, '--namespace'], [env.GAMEHOST_NAMESPACE, 'GAMEHOST_NAMESPACE'], [profile?.namespace, fromProfile]);
  // A namespace token is one namespace's: --namespace naming another leaves the environment's and the profile's
  // aside (one is made with the cloud token), unless --namespace-token gives one too.
  const otherNamespace = namespace?.from === '--namespace' && cloud !== undefined;
  const namespaceToken = first([g.namespaceToken, '--namespace-token'], ...(otherNamespace ? [] : ([[env.GAMEHOST_NAMESPACE_TOKEN, 'GAMEHOST_NAMESPACE_TOKEN'], [profile?.namespace_token, fromProfile]] as [string | undefined, string][])));
  // The service's game and namespace ids are UUIDs: anything else is a typo, refused before it reaches a URL.
  if (game) game.value = parseUuid(game.from.startsWith('profile') ? `the game id of ${game.from}` : game.from, game.value);
  // A namespace may be named by its name id (staging), which the context looks up in the game.
  const namespaceName = namespace && NAME_ID.test(namespace.value) && !UUID.test(namespace.value) ? namespace.value : undefined;
  if (namespace && namespaceName === undefined) {
    const what = namespace.from.startsWith('profile') ? `the namespace id of ${namespace.from}` : namespace.from;
    if (!UUID.test(namespace.value.trim())) throw new UsageError(`${what} must be a UUID or a name id (staging), not "${namespace.value}"`);
    namespace.value = parseUuid(what, namespace.value);
  }
  const named = namespaceName === undefined ? { namespaceId: namespace?.value } : { namespaceName };

  if (endpoint) {
    // Without a namespace token, matchmaker calls use one made with the cloud token (src/api/namespace-token.ts).
    ctx.verbose(describe(endpoint, cloud, namespaceToken ?? (cloud && MADE), game, namespace));
    return {
      endpoint: endpoint.value,
      cloudToken: cloud?.value,
      namespaceToken: namespaceToken?.value,
      gameId: game?.value,
      ...named,
      embedded: false,
    };
  }

  // In CI, a push or a lobby that went to a throwaway emulator would pass for one that reached the service.
  const ci = ciVariable(env);
  if (ctx.writes && ci && !embeddedAsked) {
    const cause = cloud ? `${cloud.from} is given but no endpoint is` : 'no endpoint is set';
    throw new UsageError(
      `${cause}, and under CI (${ci}=${env[ci]}) this command does not go to a throwaway embedded emulator: pass --endpoint or set GAMEHOST_ENDPOINT, or set GAMEHOST_ENDPOINT=${EMBEDDED} to use the embedded emulator on purpose`,
    );
  }
  const emu = await ctx.emulator();
  const fromEmulator = (value: string): Sourced => ({ value, from: 'emulator' });
  const cloudToken = cloud ?? fromEmulator(emu.tokens.cloud);
  // A cloud token given for the embedded emulator is used as given: matchmaker calls make a namespace token with it.
  // Its public token is prod's: another namespace's is made with the cloud token.
  const other = namespace !== undefined && namespace.value !== emu.namespaceId && namespace.value !== 'prod';
  const nsToken = namespaceToken ?? (cloud || other ? undefined : fromEmulator(emu.tokens.public));
  const gameId = game ?? fromEmulator(emu.gameId);
  const namespaceId = namespace ?? fromEmulator(emu.namespaceId);
  ctx.verbose(describe({ value: emu.endpoint, from: 'embedded emulator' }, cloudToken, nsToken ?? MADE, gameId, namespaceId));
  return {
    endpoint: emu.endpoint,
    cloudToken: cloudToken.value,
    namespaceToken: nsToken?.value,
    gameId: gameId.value,
    ...(namespaceName === undefined ? { namespaceId: namespaceId.value } : { namespaceName }),
    embedded: true,
    cloudTokenFrom: cloud?.from,
  };
}

/** The embedded emulator's settings, from the environment: its data directory, GAMEHOST_EMULATOR_CONFIG and _FAULTS. */
export async function embeddedEmulatorOptions(ctx: BaseContext): Promise<StartEmulatorOptions> {
  const env = ctx.env;
  let config: StartEmulatorOptions['config'];
  if (env.GAMEHOST_EMULATOR_CONFIG) {
    const { checkWholeConfig, loadEmulatorConfig } = await import('./emulator-config.js');
    config = loadEmulatorConfig(env.GAMEHOST_EMULATOR_CONFIG);
    checkWholeConfig(config, `emulator config ${env.GAMEHOST_EMULATOR_CONFIG}`);
  }
  const faults = env.GAMEHOST_EMULATOR_FAULTS || undefined;
  if (faults) {
    const { parseFaults } = await import('../emulator/faults.js');
    try {
      parseFaults(faults);
    } catch (err) {
      throw new UsageError(`GAMEHOST_EMULATOR_FAULTS: ${(err as Error).message}`);
    }
  }
  return { dataDir: emulatorDir(env), config, faults };
}

function sameEndpoint(stored: string, given: string): boolean {
  try {
    return normalizeEndpoint(stored, true) === given;
  } catch {
    return false;
  }
}

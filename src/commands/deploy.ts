// `gamehost deploy [namespace]`: from a Rivet project's config to a version deployed to a namespace, as `rivet
// deploy` does (SERVICE-FACTS "Versions, namespaces…" §5): read rivet.yaml (and rivet.<namespace>.* over it), apply
// -o, validate with the service (every error as its path, exit 2, nothing pushed), find the namespace, reserve a
// name, get each build (an image_id as is, a local image or a Dockerfile through the Docker daemon), create the
// version, deploy it.
import path from 'node:path';
import type { ApiClient } from '../api/client.js';
import type { DockerSource } from '../config/rivet-project.js';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { NAME_ID } from '../uuid.js';
import { integer } from './args.js';
import { defineCommand } from './command.js';

export interface DeployOptions {
  namespace?: string;
  configFile?: string;
  overrides: string[];
  name?: string;
  buildArgs: Record<string, string>;
  concurrency: number;
}

/** Sections of a Rivet config the emulator's service does not serve: accepted, named, not sent. */
const NOT_DEPLOYED: Record<string, string> = {
  cdn: 'the CDN (a site is not uploaded)',
  kv: 'KV',
  identity: 'identity',
  engine: "the engine's settings (they are for the Rivet CLI's own tools)",
  scripts: 'scripts',
};

/** How a command names the project's config: deploy's and `version validate`'s. */
export const PROJECT_OPTIONS = [
  { flags: '-c, --config <file>', description: 'the config file (default: rivet.yaml, .yml, .toml or .json here, with rivet.<namespace>.* over it)' },
  { flags: '-o, --override <key=json>', description: 'set a config value, e.g. -o matchmaker.max_players=16 (repeatable)', repeatable: true },
] as const;

export default defineCommand({
  writes: true,
  operands: ['[namespace]'],
  summary: "Deploy the project's rivet.yaml: push its builds, create a version, deploy it to a namespace",
  options: [
    ...PROJECT_OPTIONS,
    { flags: '--name <display name>', description: 'the version\'s name (default: the next of today, YYYY.MM.DD-N)' },
    { flags: '--no-namespace', description: 'create the version only, deploy it nowhere' },
    { flags: '--build-arg <name=value>', description: 'a build argument for every Dockerfile built (repeatable)', repeatable: true },
    { flags: '--concurrency <n>', description: 'parts of each build uploaded at once (1-64)', default: '8', value: integer({ min: 1, max: 64 }) },
  ],
  notes:
    'Name the namespace (prod, staging, …) or pass --no-namespace. An invalid config prints every error as its path and exits 2, ' +
    "before anything is pushed. cdn, kv, identity and engine sections are accepted and named as not deployed. --json prints " +
    '{version_id, display_name, namespace_id, builds}; -q the version id. In GitHub Actions: step outputs and a job summary.',
  examples: ['gamehost deploy staging', 'gamehost deploy prod --name "v1.4.2" -o matchmaker.max_players=16', 'gamehost deploy --no-namespace -c deploy/rivet.toml --json   # in CI'],
  // The operand and --no-namespace share a key: the name, undefined, or false for --no-namespace.
  parse: (v) => parseDeploy(v as unknown as Parameters<typeof parseDeploy>[0]),
  run,
});

function parseDeploy(v: { namespace?: string | false; config?: string; override?: string[]; name?: string; buildArg?: string[]; concurrency: number }): DeployOptions {
  const namespace = typeof v.namespace === 'string' ? v.namespace : undefined;
  const noNamespace = v.namespace === false;
  if (namespace === undefined && !noNamespace) throw new UsageError('name the namespace to deploy to (prod, staging, …), or pass --no-namespace to only create the version');
  if (namespace !== undefined && !NAME_ID.test(namespace)) throw new UsageError(`"${namespace}" is not a namespace name id: 1 to 16 of a-z, 0-9 and "-"`);
  const buildArgs: Record<string, string> = {};
  for (const arg of v.buildArg ?? []) {
    const at = arg.indexOf('=');
    if (at <= 0) throw new UsageError(`--build-arg must be name=value, not "${arg}"`);
    if (/^RIVET_/i.test(arg)) throw new UsageError(`--build-arg ${arg.slice(0, at)}: RIVET_* build args are the service's own`);
    buildArgs[arg.slice(0, at)] = arg.slice(at + 1);
  }
  return { namespace, configFile: v.config, overrides: v.override ?? [], name: v.name, buildArgs, concurrency: v.concurrency };
}

/** What a path's last segment means, in words (production's validation names; SERVICE-FACTS §1). */
const REASONS: Record<string, string> = {
  'too-short': 'too short',
  'too-long': 'too long',
  invalid: 'not valid',
  'not-unique': 'used already',
  missing: 'missing',
  'too-few': 'too few',
  'too-many': 'too many',
  'too-low': 'too low',
  'too-high': 'too high',
  'name-id-invalid': 'not a game mode name (1 to 64 of a-z, A-Z, 0-9, "_" and "-")',
  'tier-name-id-invalid': 'not a tier (basic-1d1, basic-2d1, …: gamehost region tiers are production\'s)',
  'min-gt-max': 'min above max',
  'min-too-high': 'min above 16',
  'max-too-high': 'max above 32',
  'no-runtime': 'no docker block, here nor in matchmaker.docker',
  'no-build': 'no image: give image_id, image or dockerfile',
  'args-too-many': 'more than 64 args',
  'env-vars-too-many': 'more than 64 env vars',
  'conflicts-with-default': 'a variable the service sets itself',
  'host-networking-disabled': 'host networking is not enabled for the game',
  'ports-too-many': 'more than 16 ports',
  'label-invalid': 'not a port label (1 to 16 of a-z, 0-9 and "-")',
  'label-not-unique': 'the label of another port too',
  'port-protocol-not-unique': 'the port and protocol of another port too',
  'range-min-gt-max': 'range min above its max',
  'port-out-of-range': 'range outside 26000-31999',
  'ranges-overlap': 'overlaps another range of the protocol',
  'duplicate-port-and-port-range': 'both port and port_range',
  'missing-port-and-port-range': 'neither port nor port_range',
  'unsupported-target-port': 'proxy none takes a port_range, not a port',
  'unsupported-port-range': 'a port_range needs proxy none and network_mode host',
  'needs-host-network': 'proxy none needs network_mode host',
  'needs-game-guard': 'this protocol needs proxy game_guard',
  'no-host': 'the URL has no host',
  'invalid-scheme': 'the URL is not http or https',
  'invalid-ip': 'the URL is not a public address',
  'invalid-name': 'not a header name',
  'invalid-value': 'not a header value',
  'dns-failed': 'the URL could not be reached',
  'dns-timeout': 'the URL did not answer within 5 s',
  'must-have-one': 'needs hcaptcha or turnstile',
  required: 'required',
  'no-site-id': 'no site_id',
};

/** A validation path as a line: where (`*name*` segments are names) and why. */
export function describePath(path: readonly unknown[]): string {
  const segments = path.map((s) => String(s));
  const last = segments.at(-1) ?? '';
  const reason = REASONS[last] ?? last.replace(/-/g, ' ');
  return `${segments.join('.')}: ${reason}`;
}

/** The image a docker block runs, as the version is created with it. */
interface DeployedBuild {
  path: string;
  game_mode: string | null;
  build_id: string;
  source: 'image_id' | 'image' | 'dockerfile';
}

async function run(ctx: Context, o: DeployOptions): Promise<void> {
  const [ops, { readGame, findNamespace }] = await Promise.all([import('../api/operations.js'), import('../api/resolve.js')]);
  const { sent, sources, files } = await readProject(ctx, o);
  const api = await ctx.api();
  // The namespace first: a mistyped one is said before anything else is asked.
  const game = await readGame(api);
  const namespace = o.namespace === undefined ? undefined : findNamespace(game, o.namespace);
  await validateProject(ctx, api, { sent, sources, name: o.name, what: 'nothing was pushed' });
  const displayName = o.name ?? (await ops.reserveVersionName(api)).version_display_name;
  if (typeof displayName !== 'string' || displayName === '') throw new UsageError('the service reserved no version name; pass --name');

  const builds: DeployedBuild[] = [];
  // By the block's path; the keys to set its image id at beside.
  const ids = new Map<string, string>();
  const keys = new Map(sources.map((s) => [s.path, blockKeys(s)]));
  const { pushDockerSource } = await import('./deploy-builds.js');
  // The top-level block first: the game modes that name no image of their own run its image.
  for (const s of sources) {
    if (s.kind === 'image_id') ids.set(s.path, s.imageId);
    else if (s.kind === 'image' || s.kind === 'dockerfile') {
      const buildId = await pushDockerSource(ctx, api, s, { displayName, buildArgs: o.buildArgs, concurrency: o.concurrency, configDir: configDir(ctx.cwd, files) });
      ids.set(s.path, buildId);
    } else if (s.kind === 'top_level') {
      const top = ids.get('matchmaker.docker');
      if (top !== undefined) ids.set(s.path, top);
    }
    const id = ids.get(s.path);
    if (id !== undefined && (s.kind === 'image_id' || s.kind === 'image' || s.kind === 'dockerfile')) builds.push({ path: s.path, game_mode: s.gameMode ?? null, build_id: id, source: s.kind });
  }
  const { version_id: versionId } = await ops.createVersion(api, { display_name: displayName, config: withImageIds(sent, [...ids].map(([where, id]) => [keys.get(where)!, id] as const)) });
  if (namespace !== undefined) await ops.setNamespaceVersion(api, namespace.namespace_id, versionId);
  const result = { version_id: versionId, display_name: displayName, namespace_id: namespace?.namespace_id ?? null, builds };
  const { writeStepOutputs, appendDeploySummary } = await import('../output/ci.js');
  writeStepOutputs(ctx, { version_id: versionId, display_name: displayName, ...(namespace ? { namespace_id: namespace.namespace_id } : {}) });
  appendDeploySummary(ctx, { ...result, namespace: namespace?.name_id ?? null });
  if (ctx.global.json) {
    const { writeJson } = await import('../output/json.js');
    return writeJson(ctx, result);
  }
  if (ctx.global.quiet) return void ctx.io.stdout.write(`${versionId}\n`);
  const { renderRecord } = await import('../output/record.js');
  ctx.io.stdout.write(
    renderRecord(ctx, [
      { label: 'Version', key: 'display_name', value: displayName },
      { label: 'Version id', key: 'version_id', value: versionId },
      { label: 'Namespace', key: 'namespace', value: namespace ? `${namespace.name_id} (${namespace.namespace_id})` : 'none (--no-namespace)' },
      ...builds.map((b) => ({ label: b.game_mode === null ? 'Build' : `Build (${b.game_mode})`, key: `build_${b.game_mode ?? 'default'}`, value: `${b.build_id} (${b.source})` })),
    ]),
  );
}

/** A project's config as read (files, -o), what the service is sent of it, and its docker blocks. */
export interface Project {
  files: string[];
  sources: DockerSource[];
  /** The sections the service deploys (the others named on stderr and left out). */
  sent: Record<string, unknown>;
}

/** Reads the project's config as `rivet deploy` does, names each section the service does not serve. */
export async function readProject(ctx: Context, o: { namespace?: string; configFile?: string; overrides: string[] }): Promise<Project> {
  const { loadProjectConfig, dockerSources } = await import('../config/rivet-project.js');
  const { config, files } = await loadProjectConfig({ dir: ctx.cwd, cwd: ctx.cwd, namespace: o.namespace, configFile: o.configFile, overrides: o.overrides });
  ctx.verbose(`config: ${files.join(' + ')}`);
  const sources = dockerSources(config);
  const sent = structuredClone(config) as Record<string, unknown>;
  for (const [section, what] of Object.entries(NOT_DEPLOYED)) {
    if (sent[section] === undefined) continue;
    delete sent[section];
    ctx.info(`${section}: not deployed: gamehost deploys the matchmaker, not ${what}`);
  }
  return { files, sources, sent };
}

/**
 * The service's validation of the project, as the Rivet CLI asks it: a block still to build stands in with the nil
 * id, the name is `name` or a mock one. Every error a line of its own (--json: `{errors}` on stdout), then one error
 * line ending with `what`, exit 2.
 */
export async function validateProject(ctx: Context, api: ApiClient, p: { sent: Record<string, unknown>; sources: DockerSource[]; name?: string; what: string }): Promise<void> {
  const [{ validateVersion }, { sanitizeLine }] = await Promise.all([import('../api/operations.js'), import('../output/sanitize.js')]);
  const NIL = '00000000-0000-0000-0000-000000000000';
  const probe = withImageIds(p.sent, p.sources.map((s) => [blockKeys(s), s.kind === 'image_id' ? s.imageId : NIL] as const));
  const { errors } = await validateVersion(api, { display_name: p.name ?? 'Mock Display Name', config: probe });
  const problems = (Array.isArray(errors) ? errors : []).map((e) => (Array.isArray(e?.path) ? e.path : [String(e?.path)]));
  if (problems.length === 0) return;
  const n = `${problems.length} error${problems.length === 1 ? '' : 's'}`;
  if (ctx.global.json) {
    const { writeJson } = await import('../output/json.js');
    writeJson(ctx, { errors: problems.map((path) => ({ path, reason: describePath(path).split(': ').slice(1).join(': ') })) });
  } else {
    ctx.io.stderr.write(problems.map((path) => `  ${sanitizeLine(describePath(path))}\n`).join(''));
  }
  throw new UsageError(`the config is invalid (${n}${ctx.global.json ? ' on stdout' : ' above'}); ${p.what}`);
}

/** The folder a Dockerfile's context is relative to: the config file's. */
function configDir(cwd: string, files: string[]): string {
  const first = files[0];
  return first === undefined ? cwd : path.resolve(cwd, path.dirname(first));
}

/** Where a docker block is in the config, as keys (a game mode's name may hold any character). */
function blockKeys(s: { gameMode?: string }): string[] {
  return s.gameMode === undefined ? ['matchmaker', 'docker'] : ['matchmaker', 'game_modes', s.gameMode, 'docker'];
}

/** The config with `image_id` set in the docker block at each path (and the CLI-only keys of those blocks removed). */
function withImageIds(config: Record<string, unknown>, ids: Iterable<readonly [string[], string]>): Record<string, unknown> {
  const out = structuredClone(config);
  for (const [where, id] of ids) {
    let block: Record<string, unknown> = out;
    for (const key of where) block = block[key] as Record<string, unknown>;
    block.image_id = id;
    delete block.image;
    delete block.dockerfile;
    delete block.build_args;
  }
  return out;
}

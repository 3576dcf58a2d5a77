// The GitHub Actions (action.yml, game/action.yml) run as the runner runs a composite action, without GitHub: each
// `run:` step a bash script (`bash --noprofile --norc -eo pipefail`), `${{ … }}` expressions replaced from the
// inputs, earlier steps' outputs and the github context, and the files the runner reads after each step
// (GITHUB_OUTPUT, GITHUB_ENV, GITHUB_PATH, GITHUB_STEP_SUMMARY) read as it reads them; `uses:` steps (the runner's
// cache) are the runner's own and left out, so the CLI is found installed, as after a cache hit (one test runs the
// install of a cache miss, from npm's cache). Against the emulator over loopback. docs/ci.md's workflows are read from
// the page and run step by step, but the steps SKIPS lists with why.
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, assert, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { validateTag } from '../../src/commands/build/push.js';
import { isolatedEnv, tempDir } from '../helpers/cli.js';
import { listBuilds } from '../helpers/emulator.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

interface Step {
  name?: string;
  id?: string;
  if?: string;
  uses?: string;
  shell?: string;
  run?: string;
  env?: Record<string, string>;
}
interface Action {
  inputs: Record<string, { required?: boolean; default?: string }>;
  outputs: Record<string, { value: string }>;
  runs: { using: string; steps: Step[] };
}

type Context = Record<string, Record<string, unknown>>;

/** `${{ a.b.c }}` from the context; any other expression fails the test, so the action uses only what is run here. */
function evaluate(text: string, context: Context): string {
  return text.replace(/\$\{\{\s*([^}]*?)\s*\}\}/g, (_all, expr: string) => {
    if (!/^[a-z_][\w-]*(\.[\w-]+)+$/i.test(expr)) throw new Error(`expression not evaluated by this runner: ${expr}`);
    let value: unknown = context;
    for (const part of expr.split('.')) value = (value as Record<string, unknown> | undefined)?.[part];
    return value === undefined || value === null ? '' : String(value);
  });
}

/** The runner's reading of GITHUB_OUTPUT and GITHUB_ENV: `name=value` lines and `name<<DELIMITER` blocks. */
function readCommandFile(file: string): Record<string, string> {
  const values: Record<string, string> = {};
  const lines = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n') : [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === '') continue;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc) {
      const body: string[] = [];
      while (++i < lines.length && lines[i] !== heredoc[2]) body.push(lines[i]!);
      values[heredoc[1]!] = body.join('\n');
    } else {
      const eq = line.indexOf('=');
      values[line.slice(0, eq)] = line.slice(eq + 1);
    }
  }
  return values;
}

interface StepRun {
  name: string;
  status: number | null;
  stdout: string;
  stderr: string;
  /** What the step wrote to $GITHUB_OUTPUT, $GITHUB_ENV and $GITHUB_STEP_SUMMARY, as written. */
  files: { output: string; env: string; summary: string };
}

/** What the runner keeps for a job: its environment and PATH additions, masks, summary, output, steps run. */
interface Job {
  env: Record<string, string>;
  paths: string[];
  workspace: string;
  temp: string;
  masks: string[];
  summary: string;
  steps: StepRun[];
  skipped: string[];
  /** Everything the steps printed, before masking, but the ::add-mask:: lines themselves. */
  printed: string;
  failed: boolean;
}

function newJob(env: Record<string, string>, workspace: string): Job {
  return { env, paths: [], workspace, temp: tempDir(), masks: [], summary: '', steps: [], skipped: [], printed: '', failed: false };
}

const GITHUB = { repository: 'studio/game', run_id: '4242', ref_name: 'main' };

/** One `run:` step, as the runner runs it; the step's outputs. */
async function runStep(job: Job, step: Step, context: Context, extraEnv: Record<string, string>, n: number): Promise<Record<string, string>> {
  expect(step.shell ?? 'bash').toBe('bash');
  const id = `${job.steps.length}-${n}`;
  const files = { GITHUB_OUTPUT: `output-${id}`, GITHUB_ENV: `env-${id}`, GITHUB_PATH: `path-${id}`, GITHUB_STEP_SUMMARY: `summary-${id}` };
  const commandFiles = Object.fromEntries(Object.entries(files).map(([k, f]) => [k, path.join(job.temp, f)]));
  for (const f of Object.values(commandFiles)) fs.writeFileSync(f, '');
  const script = path.join(job.temp, `step-${id}.sh`);
  fs.writeFileSync(script, evaluate(step.run!, context));
  const env: Record<string, string> = {
    ...job.env,
    PATH: [...job.paths, job.env.PATH].join(path.delimiter),
    GITHUB_ACTIONS: 'true',
    CI: 'true',
    GITHUB_WORKSPACE: job.workspace,
    GITHUB_REPOSITORY: GITHUB.repository,
    GITHUB_RUN_ID: GITHUB.run_id,
    GITHUB_REF_NAME: job.env.GITHUB_REF_NAME ?? GITHUB.ref_name,
    RUNNER_TEMP: job.temp,
    RUNNER_OS: 'Linux',
    RUNNER_ARCH: 'X64',
    ...extraEnv,
    ...commandFiles,
    ...Object.fromEntries(Object.entries(step.env ?? {}).map(([k, v]) => [k, evaluate(String(v), context)])),
  };
  // Asynchronously: the emulator answers from this process.
  const r = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn('bash', ['--noprofile', '--norc', '-eo', 'pipefail', script], { cwd: job.workspace, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
  const written = (f: string) => fs.readFileSync(commandFiles[f]!, 'utf8');
  job.steps.push({
    name: step.name ?? step.run!,
    status: r.status,
    stdout: r.stdout,
    stderr: r.stderr,
    files: { output: written('GITHUB_OUTPUT'), env: written('GITHUB_ENV'), summary: written('GITHUB_STEP_SUMMARY') },
  });
  // Workflow commands, as the runner reads them from the step's output.
  for (const line of `${r.stdout}\n${r.stderr}`.split('\n')) {
    const mask = /^::add-mask::(.*)$/.exec(line);
    if (mask) job.masks.push(mask[1]!);
    else job.printed += `${line}\n`;
  }
  Object.assign(job.env, readCommandFile(commandFiles.GITHUB_ENV!));
  job.paths.unshift(...fs.readFileSync(commandFiles.GITHUB_PATH!, 'utf8').split('\n').filter(Boolean).reverse());
  job.summary += fs.readFileSync(commandFiles.GITHUB_STEP_SUMMARY!, 'utf8');
  if (r.status !== 0) job.failed = true;
  return readCommandFile(commandFiles.GITHUB_OUTPUT!);
}

/** A composite action's steps, as the runner runs them, stopping at the first that fails; the action's outputs. */
async function runAction(actionFile: string, inputs: Record<string, string>, job: Job): Promise<Record<string, string>> {
  const action = parse(fs.readFileSync(actionFile, 'utf8')) as Action;
  expect(action.runs.using).toBe('composite');
  const github = { ...GITHUB, action_path: path.dirname(actionFile), workspace: job.workspace };
  const inputValues: Record<string, string> = {};
  for (const [name, spec] of Object.entries(action.inputs)) {
    const given = inputs[name];
    if (given === undefined && spec.required) throw new Error(`input ${name} is required`);
    inputValues[name] = given ?? evaluate(spec.default ?? '', { github });
  }
  for (const name of Object.keys(inputs)) expect(Object.keys(action.inputs)).toContain(name);
  const context: Context = { inputs: inputValues, steps: {}, github, runner: { os: 'Linux', arch: 'X64', temp: job.temp } };
  for (const [n, step] of action.runs.steps.entries()) {
    if (job.failed) break;
    if (step.uses !== undefined) {
      job.skipped.push(step.uses);
      continue;
    }
    expect(step.if).toBeUndefined();
    const outputs = await runStep(job, step, context, { GITHUB_ACTION_PATH: github.action_path }, n);
    if (step.id) (context.steps as Record<string, unknown>)[step.id] = { outputs };
  }
  return Object.fromEntries(Object.entries(action.outputs).map(([name, spec]) => [name, evaluate(spec.value, context)]));
}

/** The job's environment: an isolated home, and this run's Node.js first on the PATH (the runner's `node`). */
function jobEnv(): Record<string, string> {
  const env = isolatedEnv() as Record<string, string>;
  return { ...env, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH}` };
}

/** This repository's actions as docs/ci.md references them: `<owner>/<repository>[/game]@<ref>`. */
function actionFile(uses: string): string | undefined {
  const m = /^[\w.-]+\/gamehost(\/game)?@[\w./-]+$/.exec(uses);
  return m ? path.join(ROOT, m[1] ? 'game' : '', 'action.yml') : undefined;
}
const PUSH_ACTION = path.join(ROOT, 'action.yml');

/** The steps of docs/ci.md's workflows this runner does not run, and why: the first that matches a step skips it. */
const SKIPS: [(step: Step) => boolean, string][] = [
  [(s) => s.uses === 'actions/checkout@v4', 'the checkout: the workspace is given'],
  [(s) => /\bdocker (build|save)\b/.test(s.run ?? ''), "needs the game's Dockerfile and Docker: the workspace holds a server.tar instead"],
];
const skipReason = (step: Step) => SKIPS.find(([matches]) => matches(step))?.[1];

/** A workflow job's steps: this repository's actions run as above, the SKIPS skipped, a step's `if:` only as
 * `always()` (every step here runs), expressions from secrets, vars, env and earlier steps. */
async function runWorkflowJob(
  steps: (Step & { with?: Record<string, string> })[],
  job: Job,
  secrets: Record<string, string>,
  vars: Record<string, string> = {},
): Promise<Record<string, { outputs: Record<string, string> }>> {
  const context: Context = { secrets, steps: {}, github: GITHUB, env: job.env, vars };
  for (const [n, step] of steps.entries()) {
    const always = step.if !== undefined && /^always\(\)/.test(step.if);
    if (step.if !== undefined && !always) throw new Error(`if: not evaluated by this runner: ${step.if}`);
    if (job.failed && !always) continue;
    const why = skipReason(step);
    if (why !== undefined) {
      job.skipped.push(`${step.name ?? step.uses ?? step.run}: ${why}`);
      continue;
    }
    if (step.uses !== undefined) {
      const inputs = Object.fromEntries(Object.entries(step.with ?? {}).map(([k, v]) => [k, evaluate(String(v), context)]));
      // A failed step inside the action fails the job; the job's `always()` steps still run.
      const failedBefore = job.failed;
      job.failed = false;
      const outputs = await runAction(actionFile(step.uses) ?? assert.fail(`unknown action ${step.uses}`), inputs, job);
      job.failed ||= failedBefore;
      if (step.id) (context.steps as Record<string, unknown>)[step.id] = { outputs };
      continue;
    }
    const outputs = await runStep(job, step, context, {}, n);
    if (step.id) (context.steps as Record<string, unknown>)[step.id] = { outputs };
  }
  return context.steps as Record<string, { outputs: Record<string, string> }>;
}

type Workflow = { name: string; jobs: Record<string, { steps: (Step & { with?: Record<string, string> })[] }> };

/** docs/ci.md's workflows, read from the page itself; the staging endpoint the emulator's. */
function ciWorkflows(endpoint = 'https://gamehost.staging.example:6420'): Workflow[] {
  const docs = fs.readFileSync(path.join(ROOT, 'docs', 'ci.md'), 'utf8');
  return [...docs.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => parse(m[1]!.replace('https://gamehost.staging.example:6420', endpoint)) as Workflow);
}

describe('action.yml: gamehost build push', () => {
  let emu: RunningEmulator;
  beforeAll(async () => {
    emu = await startEmulator({ dataDir: tempDir(), config: { startDelayMs: 0, readyDelayMs: 0 } });
  });
  afterAll(() => emu.close());

  it('pushes the file: the outputs, the token masked before anything is printed, the job summary', async () => {
    const workspace = tempDir();
    const bytes = crypto.randomBytes(3 * 1024 * 1024 + 17);
    fs.writeFileSync(path.join(workspace, 'server.tar'), bytes);
    const job = newJob(jobEnv(), workspace);
    const outputs = await runAction(
      PUSH_ACTION,
      {
        file: 'server.tar',
        tag: 'game-server:v1-2-0',
        name: 'Release 1.2.0',
        endpoint: emu.endpoint,
        token: emu.tokens.cloud,
        game: emu.gameId,
        concurrency: '2',
        compression: 'none',
        kind: 'docker_image',
      },
      job,
    );
    expect(job.failed, JSON.stringify(job.steps, null, 2)).toBe(false);
    expect(job.skipped).toEqual(['actions/cache@v4']);
    const build = (await listBuilds(emu.endpoint)).find((b) => b.build_id === outputs['build-id']);
    expect(build).toMatchObject({ image_tag: 'game-server:v1-2-0', complete: true, content_length: bytes.length });
    expect(outputs).toEqual({
      'build-id': build!.build_id,
      'upload-id': expect.stringMatching(/^[0-9a-f-]{36}$/),
      sha256: crypto.createHash('sha256').update(bytes).digest('hex'),
      bytes: String(bytes.length),
    });
    // Masked by the first step, and never printed by any step.
    expect(job.masks).toEqual([emu.tokens.cloud]);
    expect(job.steps[0]!.stdout).toBe(`::add-mask::${emu.tokens.cloud}\n`);
    expect(job.printed).not.toContain(emu.tokens.cloud);
    expect(job.summary).toContain('### gamehost build push: `game-server:v1-2-0`');
    expect(job.summary).toContain(`| Build | \`${build!.build_id}\` |`);
    // Installed from the action's own directory (here as after a cache hit), and on the job's PATH.
    expect(job.steps.find((s) => s.name === 'Install the CLI')!.stdout).toMatch(/^gamehost: the CLI in .* is installed \(restored from the cache\)\n\d+\.\d+\.\d+\n$/);
    expect(job.paths).toEqual([path.join(job.temp, 'gamehost-bin')]);
  });

  it('a push the service refuses fails the step with an error annotation, and sets no outputs', async () => {
    const workspace = tempDir();
    fs.writeFileSync(path.join(workspace, 'server.tar'), 'x');
    const job = newJob(jobEnv(), workspace);
    // A well-formed token whose signature is wrong: the service answers 401.
    const t = emu.tokens.cloud;
    const wrong = `${t.slice(0, -5)}${t.at(-5) === 'A' ? 'B' : 'A'}${t.slice(-4)}`;
    const outputs = await runAction(PUSH_ACTION, { file: 'server.tar', tag: 'game-server:v1', endpoint: emu.endpoint, token: wrong, game: emu.gameId }, job);
    expect(job.failed).toBe(true);
    const push = job.steps.at(-1)!;
    expect(push.name).toBe('gamehost build push');
    expect(push.status).toBe(3);
    expect(push.stderr).toMatch(/^::error::.+$/m);
    expect(outputs).toEqual({ 'build-id': '', 'upload-id': '', sha256: '', bytes: '' });
    expect(job.masks).toEqual([wrong]);
    expect(job.printed).not.toContain(wrong);
  });

  it('a file that is not there: an error annotation naming it, no build', async () => {
    const before = (await listBuilds(emu.endpoint)).length;
    const job = newJob(jobEnv(), tempDir());
    await runAction(PUSH_ACTION, { file: 'missing.tar', tag: 'game-server:v1', endpoint: emu.endpoint, token: emu.tokens.cloud }, job);
    expect(job.failed).toBe(true);
    expect(job.steps.at(-1)!.stderr).toMatch(/^::error::.*missing\.tar/m);
    expect(await listBuilds(emu.endpoint)).toHaveLength(before);
  });
});

describe('action.yml: what it refuses before it installs anything, and its install on a cache miss', () => {
  it('file: - (stdin, which an action\'s step cannot read): one error annotation, exit 2, nothing installed', async () => {
    const job = newJob(jobEnv(), tempDir());
    const outputs = await runAction(PUSH_ACTION, { file: '-', tag: 'game-server:v1', endpoint: 'http://127.0.0.1:9', token: 'x' }, job);
    expect(job.failed).toBe(true);
    expect(job.steps).toHaveLength(1);
    expect(job.steps[0]).toMatchObject({ status: 2, stdout: '::add-mask::x\n' });
    expect(job.steps[0]!.stderr).toMatch(/^::error::file: - \(stdin\) cannot be read by an action's step: .+\n$/);
    expect(outputs['build-id']).toBe('');
  });

  it("the runner's Node.js is checked first: too old, or none, is one error annotation naming actions/setup-node", async () => {
    // A `node` that says it is 18.19.0, first on the PATH.
    const old = tempDir();
    fs.writeFileSync(path.join(old, 'node'), '#!/bin/sh\necho 18.19.0\n', { mode: 0o755 });
    const job = newJob({ ...jobEnv(), PATH: `${old}${path.delimiter}${process.env.PATH}` }, tempDir());
    await runAction(PUSH_ACTION, { file: 'server.tar', tag: 'game-server:v1' }, job);
    expect(job.failed).toBe(true);
    expect(job.steps.map((s) => s.name)).toEqual(['Mask the token, check the file', "The CLI's cache key"]);
    expect(job.steps[1]!.status).toBe(1);
    expect(job.steps[1]!.stderr).toBe(
      '::error::gamehost needs Node.js 20.18.1 or later (22.13 or later on 22) on the runner, not 18.19.0: add actions/setup-node with node-version: 22 before this action\n',
    );
    expect(job.steps[1]!.files.output).toBe('');

    // No node at all: a PATH with bash and dirname only.
    const bare = tempDir();
    for (const tool of ['bash', 'dirname']) fs.symlinkSync(spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim(), path.join(bare, tool));
    const none = newJob({ ...jobEnv(), PATH: bare }, tempDir());
    await runAction(PUSH_ACTION, { file: 'server.tar', tag: 'game-server:v1' }, none);
    expect(none.steps[1]!.stderr).toBe(
      '::error::gamehost needs Node.js 20.18.1 or later (22.13 or later on 22) on the runner, and there is no node on the PATH: add actions/setup-node before this action\n',
    );
  });

  it('on a cache miss: the runtime dependencies only, the CLI built, the build tools gone, gamehost on the PATH', { timeout: 300_000 }, async () => {
    // The repository at this ref as the runner checks it out (no node_modules, no dist/); npm from its cache only,
    // as a test must not need the network.
    const repo = tempDir();
    for (const f of ['package.json', 'package-lock.json', 'tsconfig.json', 'action.yml', 'bin', 'src', 'scripts/action-setup.sh']) {
      fs.cpSync(path.join(ROOT, f), path.join(repo, f), { recursive: true });
    }
    const npmCache = spawnSync('npm', ['config', 'get', 'cache'], { encoding: 'utf8' }).stdout.trim();
    const job = newJob(
      { ...jobEnv(), npm_config_cache: npmCache, npm_config_offline: 'true', npm_config_logs_dir: tempDir(), npm_config_update_notifier: 'false' },
      tempDir(),
    );
    const started = Date.now();
    const outputs = await runStep(job, { name: 'Install the CLI', run: 'bash "$GITHUB_ACTION_PATH/scripts/action-setup.sh" install' }, {}, { GITHUB_ACTION_PATH: repo }, 0);
    const install = job.steps[0]!;
    expect(install.status, install.stderr + install.stdout).toBe(0);
    console.log(`action install on a cache miss: ${Date.now() - started} ms`);
    expect(outputs).toEqual({});
    expect(install.stdout.trim().split('\n').at(-1)).toMatch(/^\d+\.\d+\.\d+$/);
    expect(fs.existsSync(path.join(repo, 'dist', 'cli.js'))).toBe(true);
    // What the cache keeps: the runtime's packages, none of the dev ones, no TypeScript, no @types.
    const installed = fs.readdirSync(path.join(repo, 'node_modules'));
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean; optional?: boolean; os?: string[]; cpu?: string[] }> };
    const top = Object.entries(lock.packages).filter(([p]) => /^node_modules\/(@[^/]+\/)?[^/@]+$/.test(p));
    const runtime = top.filter(([, p]) => !p.dev && !p.optional);
    const devOnly = top.filter(([, p]) => p.dev);
    expect(runtime.length).toBeGreaterThan(10);
    for (const [p] of runtime) expect(fs.existsSync(path.join(repo, p)), p).toBe(true);
    for (const [p] of devOnly) expect(fs.existsSync(path.join(repo, p)), p).toBe(false);
    expect(installed).not.toContain('typescript');
    expect(installed).not.toContain('@types');
    expect(fs.readdirSync(job.temp).filter((f) => f.startsWith('gamehost-build.'))).toEqual([]);
    // And it runs from the job's PATH.
    const version = spawnSync('gamehost', ['--version'], { env: { ...job.env, PATH: [...job.paths, job.env.PATH].join(path.delimiter) }, encoding: 'utf8' });
    expect(version.stdout).toBe(`${pkg.version}\n`);
  });
});

describe('docs/ci.md: a game per job on a staging emulator (game/action.yml), a push, and the cleanup', () => {
  const ADMIN = 'admin-token-for-the-action-test-0123456789';
  let emu: RunningEmulator;
  beforeAll(async () => {
    emu = await startEmulator({ dataDir: tempDir(), config: { startDelayMs: 0, readyDelayMs: 0 }, adminToken: ADMIN });
  });
  afterAll(() => emu.close());

  async function games(): Promise<{ game_id: string; name: string }[]> {
    const res = await fetch(`${emu.endpoint}/_emulator/games`, { headers: { authorization: `Bearer ${ADMIN}` } });
    return ((await res.json()) as { games: { game_id: string; name: string }[] }).games;
  }

  it('the documented job: its own game in the environment (masked), the push and play on it, then deleted', async () => {
    // The staging service is the test's emulator.
    const steps = Object.values(ciWorkflows(emu.endpoint).find((w) => w.name === 'Integration tests')!.jobs)[0]!.steps;
    expect(steps.at(-1)).toMatchObject({ if: "always() && env.GAMEHOST_GAME != ''" });
    const workspace = tempDir();
    fs.writeFileSync(path.join(workspace, 'server.tar'), crypto.randomBytes(64 * 1024));
    const job = newJob(jobEnv(), workspace);
    const before = (await games()).length;
    // All but the delete step, then what the emulator holds, then the delete step.
    await runWorkflowJob(steps.slice(0, -1), job, { GAMEHOST_EMULATOR_ADMIN_TOKEN: ADMIN });
    const during = await games();
    expect(job.failed, JSON.stringify(job.steps, null, 2)).toBe(false);
    const gameId = job.env.GAMEHOST_GAME!;
    expect(during.find((g) => g.game_id === gameId)?.name).toBe('studio/game#4242');
    expect(during).toHaveLength(before + 1);
    expect(job.env).toMatchObject({ GAMEHOST_ENDPOINT: emu.endpoint, GAMEHOST_GAME: gameId });
    for (const name of ['GAMEHOST_TOKEN', 'GAMEHOST_NAMESPACE_TOKEN', 'GAMEHOST_NAMESPACE']) expect(job.env[name]).toBeTruthy();
    // The admin token and the game's tokens are masks, and none is printed; the admin token stays out of the job's env.
    expect(job.masks).toEqual(expect.arrayContaining([ADMIN, job.env.GAMEHOST_TOKEN, job.env.GAMEHOST_NAMESPACE_TOKEN]));
    for (const secret of [ADMIN, job.env.GAMEHOST_TOKEN!, job.env.GAMEHOST_NAMESPACE_TOKEN!]) expect(job.printed).not.toContain(secret);
    expect(Object.values(job.env)).not.toContain(ADMIN);
    // The push went to the job's game (its token from the environment), and the lobby was made in it.
    expect(job.summary).toContain('### gamehost build push: `game-server:ci`');
    const lobby = JSON.parse(fs.readFileSync(path.join(workspace, 'lobby.json'), 'utf8'));
    expect(lobby.lobby.lobby_id).toMatch(/^[0-9a-f-]{36}$/);

    await runWorkflowJob(steps.slice(-1), job, { GAMEHOST_EMULATOR_ADMIN_TOKEN: ADMIN });
    expect(job.steps.at(-1)!.status, job.steps.at(-1)!.stderr).toBe(0);
    expect((await games()).find((g) => g.game_id === gameId)).toBeUndefined();
    // A dozen CLI processes one after another: more than the default 20 s on a loaded machine.
  }, 90_000);

  it('the cleanup runs after a failed step too (if: always())', async () => {
    const steps = Object.values(ciWorkflows(emu.endpoint).find((w) => w.name === 'Integration tests')!.jobs)[0]!.steps;
    // No server.tar in the workspace: the push fails; Play is skipped; the game is deleted all the same.
    const job = newJob(jobEnv(), tempDir());
    await runWorkflowJob(steps, job, { GAMEHOST_EMULATOR_ADMIN_TOKEN: ADMIN });
    expect(job.failed).toBe(true);
    expect(job.steps.map((s) => s.name)).not.toContain('Play');
    expect(job.steps.at(-1)).toMatchObject({ name: 'Delete the game', status: 0 });
    expect((await games()).find((g) => g.game_id === job.env.GAMEHOST_GAME)).toBeUndefined();
  }, 90_000);
  it('every step of every workflow of the page runs here but those it says why not', () => {
    const skipped = ciWorkflows().flatMap((w) =>
      Object.values(w.jobs).flatMap((j) => j.steps.flatMap((step) => (skipReason(step) ? [`${w.name}: ${step.name ?? step.uses}: ${skipReason(step)}`] : []))),
    );
    console.log(`docs/ci.md's steps not run here:\n${skipped.join('\n')}`);
    expect(skipped).toEqual([
      'Release build: actions/checkout@v4: the checkout: the workspace is given',
      "Release build: The server image: needs the game's Dockerfile and Docker: the workspace holds a server.tar instead",
      'Integration tests: actions/checkout@v4: the checkout: the workspace is given',
      "Integration tests: The server image: needs the game's Dockerfile and Docker: the workspace holds a server.tar instead",
    ]);
    // Each workflow pushes the file an earlier step of its own makes.
    for (const w of ciWorkflows()) {
      const steps = Object.values(w.jobs)[0]!.steps;
      const push = steps.findIndex((s) => s.with?.file !== undefined);
      expect(steps.slice(0, push).some((s) => s.run?.includes(`-o ${steps[push]!.with!.file}`)), w.name).toBe(true);
    }
  });

  /** The release workflow's job on a ref, against the emulator (`vars` as the repository would set them). */
  async function release(refName: string, vars: Record<string, string>) {
    const steps = Object.values(ciWorkflows().find((w) => w.name === 'Release build')!.jobs)[0]!.steps;
    const workspace = tempDir();
    const bytes = crypto.randomBytes(256 * 1024 + 3);
    fs.writeFileSync(path.join(workspace, 'server.tar'), bytes);
    const job = newJob({ ...jobEnv(), GITHUB_REF_NAME: refName }, workspace);
    const outputs = await runWorkflowJob(steps, job, { GAMEHOST_TOKEN: emu.tokens.cloud }, vars);
    return { job, outputs, bytes };
  }

  it('the release workflow: its tag from the git tag, the push to the endpoint given, the files the runner reads', async () => {
    const { job, outputs, bytes } = await release('v1.2.0', { GAMEHOST_ENDPOINT: emu.endpoint, GAMEHOST_GAME: emu.gameId });
    expect(job.failed, JSON.stringify(job.steps, null, 2)).toBe(false);
    const tag = job.steps.find((s) => s.name === 'Its tag')!;
    expect(tag.files).toEqual({ output: 'tag=game-server:v1-2-0\n', env: '', summary: '' });
    const build = (await listBuilds(emu.endpoint, ADMIN)).find((b) => b.build_id === outputs.push!.outputs['build-id'])!;
    expect(build).toMatchObject({ image_tag: 'game-server:v1-2-0', complete: true, content_length: bytes.length });
    // The CLI's own step: its outputs and its summary, in the files the runner reads.
    const push = job.steps.find((s) => s.name === 'gamehost build push')!;
    expect(push.files.output).toContain(`build_id=${build.build_id}\n`);
    expect(push.files.output).toContain(`sha256=${crypto.createHash('sha256').update(bytes).digest('hex')}\n`);
    expect(push.files.output).toContain(`bytes=${bytes.length}\n`);
    expect(push.files.summary).toContain('### gamehost build push: `game-server:v1-2-0`');
    expect(push.files.env).toBe('');
    expect(job.steps.at(-1)!.stdout).toBe(`build ${build.build_id}, ${bytes.length} bytes\n`);
    expect(job.printed).not.toContain(emu.tokens.cloud);
  }, 90_000);

  it('the release workflow with no endpoint set: the push refuses in one line, exit 2, nothing in $GITHUB_OUTPUT', async () => {
    const before = (await listBuilds(emu.endpoint, ADMIN)).length;
    const { job } = await release('v1.2.1', { GAMEHOST_GAME: emu.gameId });
    expect(job.failed).toBe(true);
    const push = job.steps.find((s) => s.name === 'gamehost build push')!;
    expect(push.status).toBe(2);
    // The CLI's one line, and the same as the job's error annotation.
    const [line, annotation, ...more] = push.stderr.split('\n');
    expect(line).toMatch(/^error: .*GAMEHOST_ENDPOINT/);
    expect(annotation).toBe(`::error::${line!.slice('error: '.length)}`);
    expect(more).toEqual(['']);
    expect(push.files).toEqual({ output: '', env: '', summary: '' });
    expect(await listBuilds(emu.endpoint, ADMIN)).toHaveLength(before);
  }, 90_000);

  it("its tag step makes a tag the CLI takes from any git tag or branch name", async () => {
    const step = Object.values(ciWorkflows().find((w) => w.name === 'Release build')!.jobs)[0]!.steps.find((s) => s.name === 'Its tag')!;
    const names: [string, string][] = [
      ['v1.2.0', 'game-server:v1-2-0'],
      ['Feature/Fix+UI', 'game-server:feature-fix-ui'],
      ['release/2026.11_rc+build.7', 'game-server:release-2026-11_rc-build-7'],
      ['--odd--', 'game-server:odd'],
      ['déjà-vu', 'game-server:d--j---vu'],
      ['...', 'game-server:build'],
    ];
    for (const [ref, expected] of names) {
      const job = newJob({ ...jobEnv(), GITHUB_REF_NAME: ref }, tempDir());
      const outputs = await runStep(job, step, {}, {}, 0);
      expect(job.steps[0]!.status, job.steps[0]!.stderr).toBe(0);
      expect(outputs.tag, ref).toBe(expected);
      expect(validateTag(outputs.tag!)).toBe(expected);
    }
  });
});

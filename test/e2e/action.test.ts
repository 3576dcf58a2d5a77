// The GitHub Actions (action.yml, game/action.yml) run as the runner runs a composite action, without GitHub: each
// `run:` step a bash script (`bash --noprofile --norc -eo pipefail`), `${{ … }}` expressions replaced from the
// inputs, earlier steps' outputs and the github context, and the files the runner reads after each step
// (GITHUB_OUTPUT, GITHUB_ENV, GITHUB_PATH, GITHUB_STEP_SUMMARY) read as it reads them; `uses:` steps (the runner's
// cache) are the runner's own and left out, so the CLI is found installed, as after a cache hit. Against the
// emulator over loopback.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, assert, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
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

const GITHUB = { repository: 'studio/game', run_id: '4242' };

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
  job.steps.push({ name: step.name ?? step.run!, status: r.status, stdout: r.stdout, stderr: r.stderr });
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

const ACTIONS: Record<string, string> = {
  'gamehost-dev/gamehost@v1': path.join(ROOT, 'action.yml'),
  'gamehost-dev/gamehost/game@v1': path.join(ROOT, 'game', 'action.yml'),
};

/** A workflow job's steps: this repository's actions run as above, checkout skipped (the workspace is given), a
 * step's `if:` only as `always()` (every step here runs), expressions from secrets, env and earlier steps. */
async function runWorkflowJob(steps: (Step & { with?: Record<string, string> })[], job: Job, secrets: Record<string, string>): Promise<void> {
  const context: Context = { secrets, steps: {}, github: GITHUB, env: job.env, vars: {} };
  for (const [n, step] of steps.entries()) {
    const always = step.if !== undefined && /^always\(\)/.test(step.if);
    if (step.if !== undefined && !always) throw new Error(`if: not evaluated by this runner: ${step.if}`);
    if (job.failed && !always) continue;
    if (step.uses === 'actions/checkout@v4') {
      job.skipped.push(step.uses);
      continue;
    }
    if (step.uses !== undefined) {
      const inputs = Object.fromEntries(Object.entries(step.with ?? {}).map(([k, v]) => [k, evaluate(String(v), context)]));
      // A failed step inside the action fails the job; the job's `always()` steps still run.
      const failedBefore = job.failed;
      job.failed = false;
      const outputs = await runAction(ACTIONS[step.uses] ?? assert.fail(`unknown action ${step.uses}`), inputs, job);
      job.failed ||= failedBefore;
      if (step.id) (context.steps as Record<string, unknown>)[step.id] = { outputs };
      continue;
    }
    await runStep(job, step, context, {}, n);
  }
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
      ACTIONS['gamehost-dev/gamehost@v1']!,
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
    const outputs = await runAction(ACTIONS['gamehost-dev/gamehost@v1']!, { file: 'server.tar', tag: 'game-server:v1', endpoint: emu.endpoint, token: wrong, game: emu.gameId }, job);
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
    await runAction(ACTIONS['gamehost-dev/gamehost@v1']!, { file: 'missing.tar', tag: 'game-server:v1', endpoint: emu.endpoint, token: emu.tokens.cloud }, job);
    expect(job.failed).toBe(true);
    expect(job.steps.at(-1)!.stderr).toMatch(/^::error::.*missing\.tar/m);
    expect(await listBuilds(emu.endpoint)).toHaveLength(before);
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
    const docs = fs.readFileSync(path.join(ROOT, 'docs', 'ci.md'), 'utf8');
    const block = [...docs.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!).find((y) => y.includes('gamehost/game@v1'))!;
    // The staging service is the test's emulator.
    const workflow = parse(block.replace('https://gamehost.staging.example:6420', emu.endpoint)) as { jobs: Record<string, { steps: Step[] }> };
    const steps = Object.values(workflow.jobs)[0]!.steps;
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
    const docs = fs.readFileSync(path.join(ROOT, 'docs', 'ci.md'), 'utf8');
    const block = [...docs.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!).find((y) => y.includes('gamehost/game@v1'))!;
    const workflow = parse(block.replace('https://gamehost.staging.example:6420', emu.endpoint)) as { jobs: Record<string, { steps: Step[] }> };
    const steps = Object.values(workflow.jobs)[0]!.steps;
    // No server.tar in the workspace: the push fails; Play is skipped; the game is deleted all the same.
    const job = newJob(jobEnv(), tempDir());
    await runWorkflowJob(steps, job, { GAMEHOST_EMULATOR_ADMIN_TOKEN: ADMIN });
    expect(job.failed).toBe(true);
    expect(job.steps.map((s) => s.name)).not.toContain('Play');
    expect(job.steps.at(-1)).toMatchObject({ name: 'Delete the game', status: 0 });
    expect((await games()).find((g) => g.game_id === job.env.GAMEHOST_GAME)).toBeUndefined();
  }, 90_000);
});

// Every gamehost command in the shell blocks of the README and docs/ is run as written, against the embedded
// emulator, by bash, with the real executable on PATH: the documented examples stay true. The ones that cannot
// run offline are listed below with why; each block runs in a fresh home, in a fresh directory holding the
// files the examples name (server.tar, bundle/), with $LOBBY a lobby of its emulator where the block uses one. The
// blocks are independent (each its own home and emulator), so two run at once: each is a chain of processes, one
// after another, and two chains keep both cores of a small machine busy.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pLimit from 'p-limit';
import { describe, expect, it } from 'vitest';
import { checkWholeConfig, loadEmulatorConfig } from '../../src/config/emulator-config.js';
import { isolatedEnv, tempDir } from '../helpers/cli.js';
import { BIN } from '../helpers/bin.js';

const ROOT = path.resolve(__dirname, '../..');
const DOCS = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const HAVE_JQ = spawnSync('sh', ['-c', 'command -v jq']).status === 0;

/** What cannot run offline against the embedded emulator, and why. The first that matches a line skips it. */
const OFFLINE_SKIPS: [RegExp, string][] = [
  [/\bdocker\b/, 'needs Docker and an image'],
  [/gamehost deploy\b/, "needs a project's rivet.yaml and Docker: test/e2e/deploy.test.ts deploys projects of these shapes"],
  [/build push --image\b/, 'needs Docker and an image (test/e2e/push-image.test.ts pushes one)'],
  [/--watch\b|--follow\b/, 'runs until the lobby stops or Ctrl-C'],
  [/emulator serve\b|\. \.\/emulator\.env|http:\/\/127\.0\.0\.1:6420/, 'a long-running server, or a command aimed at one'],
  [/gamehost login\b/, 'saves a profile for a real service and makes it current, which would send the next commands there'],
  [/api\.rivet\.gg|example\.com|\$GAME_ID|\$NAMESPACE_ID/, 'a real service, or its ids'],
  [/--url-only|\bcurl\b/, "a link that outlives the command: the embedded emulator's dies with it"],
  [/emulator reset(?!.*--yes)/, 'asks for confirmation on a terminal'],
  [/fpath/, 'zsh syntax'],
  [/examples\/node-sdk\//, 'the example game server and client, against a running emulator: test/e2e/examples.test.ts plays them'],
  [/my-game-server|Invoke-Expression/, "your own game server (test/e2e/sdk.test.ts runs one with this environment), or PowerShell"],
  [/\bnpm (install|link|pack)\b|npx gamehost/, 'installs gamehost; test/e2e/package.test.ts installs the packed tarball offline instead'],
  ...(HAVE_JQ ? [] : [[/\bjq\b/, 'jq is not installed here'] as [RegExp, string]]),
];

interface Block {
  file: string;
  line: number;
  commands: string[];
}

/** The shell blocks of a Markdown file: their gamehost lines (continuations joined) and `mkdir -p` lines. */
function blocks(file: string): Block[] {
  const lines = fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n');
  const found: Block[] = [];
  let current: Block | undefined;
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i]!;
    if (current === undefined) {
      if (/^```(sh|bash|shell)\s*$/.test(text)) current = { file, line: i + 1, commands: [] };
      continue;
    }
    if (text.startsWith('```')) {
      if (current.commands.length) found.push(current);
      current = undefined;
      continue;
    }
    let command = text;
    while (command.endsWith('\\') && i + 1 < lines.length) command = command.slice(0, -1) + ' ' + lines[++i]!.trim();
    if (/\bgamehost\b/.test(command) || /^mkdir -p /.test(command)) current.commands.push(command);
  }
  return found;
}

const ALL = DOCS.flatMap(blocks);
const skipped = ALL.flatMap((b) => b.commands.map((c) => [b, c, OFFLINE_SKIPS.find(([re]) => re.test(c))?.[1]] as const)).filter(([, , why]) => why);

function runBlock(block: Block): Promise<{ code: number | null; stderr: string }> {
  const env = isolatedEnv();
  const work = tempDir();
  const bin = path.join(tempDir(), 'bin');
  fs.mkdirSync(bin);
  fs.writeFileSync(path.join(bin, 'gamehost'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`, { mode: 0o755 });
  fs.writeFileSync(path.join(work, 'server.tar'), Buffer.alloc(4096, 7));
  fs.mkdirSync(path.join(work, 'bundle', 'rootfs'), { recursive: true });
  // The README's first run is from a clone: ./bin/gamehost.js.
  fs.mkdirSync(path.join(work, 'bin'));
  fs.symlinkSync(BIN, path.join(work, 'bin', 'gamehost.js'));
  fs.writeFileSync(path.join(work, 'bundle', 'config.json'), '{}');
  const profiles = block.commands.some((c) => /gamehost (profile|logout)\b/.test(c));
  const script = [
    'set -e',
    ...(block.commands.some((c) => c.includes('$LOBBY')) ? ['export LOBBY=$(gamehost lobby create --game-mode default -q)'] : []),
    'export GITHUB_SHA=0123456789abcdef0123 CI_JOB_ID=job-1',
    // A game of its own to delete, where a block deletes one it did not make.
    ...(block.commands.some((c) => c.includes('$GAMEHOST_GAME')) && !block.commands.some((c) => c.includes('game create')) ? ['eval "$(gamehost emulator game create --env)"'] : []),
    // Profiles to list, use, show and log out of; made last, as the first becomes current.
    ...(profiles ? ['default', 'ci', 'staging'].map((p) => `printf 'cloud.x.y\\n' | gamehost login --profile ${p} --endpoint https://staging.example.com --game 12345678-1234-4234-8234-123456789abc --namespace 12345678-1234-4234-8234-123456789abd --token-stdin --no-input >/dev/null 2>&1`) : []),
    ...block.commands.map((c) => (OFFLINE_SKIPS.some(([re]) => re.test(c)) ? `: skipped` : c)),
  ].join('\n');
  const child = spawn('bash', ['-c', script], { cwd: work, env: { ...env, PATH: `${bin}:${process.env.PATH}` }, timeout: 120_000 });
  child.stdin.end();
  child.stdout.resume();
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stderr }));
  });
}

const twoAtOnce = pLimit(2);

describe('the shell examples of the README and docs/ run as written, offline', () => {
  it('finds the examples, and says which it cannot run offline', () => {
    expect(ALL.length).toBeGreaterThan(10);
    for (const [b, c, why] of skipped) console.info(`not run offline (${why}): ${b.file}:${b.line}: ${c}`);
    // Most of them run.
    const total = ALL.reduce((n, b) => n + b.commands.length, 0);
    expect(skipped.length).toBeLessThan(total / 2);
  });

  for (const block of ALL) {
    if (block.commands.every((c) => OFFLINE_SKIPS.some(([re]) => re.test(c)))) continue;
    it.concurrent(`${block.file}:${block.line}`, { timeout: 150_000 }, async () => {
      const r = await twoAtOnce(() => runBlock(block));
      expect({ code: r.code, stderr: r.code === 0 ? '' : r.stderr.slice(-2000) }).toEqual({ code: 0, stderr: '' });
    });
  }
});

/** The emulator config files the docs show: their ```json blocks that set gameModes. */
function configExamples(): { where: string; text: string }[] {
  return DOCS.flatMap((file) => {
    const found: { where: string; text: string }[] = [];
    const re = /^```json\n([\s\S]*?)^```/gm;
    const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
    for (let m = re.exec(text); m !== null; m = re.exec(text))
      if (m[1]!.includes('"gameModes"')) found.push({ where: `${file}:${text.slice(0, m.index).split('\n').length}`, text: m[1]! });
    return found;
  });
}

describe('the emulator config files of docs/ are what --config takes', () => {
  const examples = configExamples();
  it('finds them (the game mode settings example among them)', () => {
    expect(examples.some((e) => e.text.includes('gameModeSettings'))).toBe(true);
  });
  for (const example of examples) {
    it(`${example.where} passes --config's check, and the emulator's`, () => {
      const file = path.join(tempDir(), 'emulator.json');
      fs.writeFileSync(file, example.text);
      expect(() => checkWholeConfig(loadEmulatorConfig(file), file)).not.toThrow();
    });
  }
});

// Startup budget: `gamehost --version` and `gamehost --help` each within 1.4x the wall time of a bare `node -e 0`.
// Runs the commands in turn (A B C D A B C D …) so drift in machine speed hits them alike; prints medians.
// In an environment of PATH and HOME alone, as bench/request.js: what the shell adds to every Node start (such as
// NODE_EXTRA_CA_CERTS, a certificate bundle read by each process, 35 ms here) would hide the CLI's share.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const BIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'gamehost.js');
const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const BUDGET = 1.4;

// Not a budget: what commander's help alone costs, which a command's help pays and `gamehost --help` no longer does
// (src/cli.ts writes it without commander). One module loads commander as the CLI does and prints the help of a
// program as large as the CLI's top level (14 options with one-line descriptions, 11 commands, a paragraph after).
export const COMMANDER_HELP = `
import { createRequire } from 'node:module';
const { Command } = createRequire(${JSON.stringify(path.join(path.dirname(BIN), '..', 'package.json'))})('commander');
const program = new Command('floor').description('A program with as many options and commands as the CLI at its top level.');
program.version('1.0.0', '-V, --version', 'print the version').helpOption('-h, --help', 'show help').exitOverride();
for (let i = 1; i <= 14; i++) program.option('--option-' + i + ' <value>', 'what option ' + i + ' does, in about as many words as the CLI uses');
for (let i = 1; i <= 11; i++) program.command('command-' + i).description('what command ' + i + ' does, in a line');
program.addHelpText('after', '\\nExit codes:\\n  0    ok\\n  1    failed\\n  2    usage\\n');
try { program.parse(['node', 'floor', '--help']); } catch {}
`;

const commands = {
  'node -e 0': [process.execPath, ['-e', '0']],
  "commander's help alone": [process.execPath, ['--input-type=module', '-e', COMMANDER_HELP]],
  'gamehost --version': [process.execPath, [BIN, '--version']],
  'gamehost --help': [process.execPath, [BIN, '--help']],
};

export function once([cmd, args]) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH, HOME: process.env.HOME } });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

export function runStartupBench() {
  const times = Object.fromEntries(Object.keys(commands).map((k) => [k, []]));
  for (const c of Object.values(commands)) once(c); // warm the page cache
  for (let i = 0; i < RUNS; i++) for (const [name, c] of Object.entries(commands)) times[name].push(once(c));
  const base = median(times['node -e 0']);
  let ok = true;
  console.log(`startup (${RUNS} runs each, median wall time, environment PATH and HOME only):`);
  for (const [name, t] of Object.entries(times)) {
    const ratio = median(t) / base;
    const budgeted = name.startsWith('gamehost');
    const verdict = name === "commander's help alone" ? '  (the floor, not a budget)' : !budgeted ? '' : ratio <= BUDGET ? `  ok (budget ${BUDGET}x)` : `  OVER BUDGET (${BUDGET}x)`;
    if (budgeted && ratio > BUDGET) ok = false;
    console.log(`  ${name.padEnd(24)} ${median(t).toFixed(1).padStart(7)} ms  ${ratio.toFixed(2)}x${verdict}`);
  }
  return ok;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = runStartupBench() ? 0 : 1;

// The installed package's start-up: `gamehost --help` of the packed package installed as a user installs it
// (scripts/install-packed.js: npm pack, npm ci --offline into an empty directory), against two floors run in turn
// with it: commander's help alone (bench/startup.js), and the same with undici loaded as the CLI loads it for a
// request (dist/api/agents.js). Budget: the installed `--help` at most 1.4x each floor. Beside them, the
// checkout's `bin/gamehost.js --help`, not judged, to show what installing changes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { packAndInstall } from '../scripts/install-packed.js';
import { COMMANDER_HELP, median, once } from './startup.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const BUDGET = 1.4;

// undici loaded as for a request: an Agent made (no connection), then the same help.
const WITH_UNDICI = `
const { Agents } = await import(${JSON.stringify(new URL('../dist/api/agents.js', import.meta.url).href)});
const agents = new Agents(process.env, 30000);
agents.for(new URL('http://127.0.0.1:9/'));
await agents.close();
${COMMANDER_HELP}`;

export function runInstalledBench() {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'gamehost-bench-installed-'));
  try {
    const r = packAndInstall(work);
    if (r.cacheMiss) {
      console.log(`installed package: not measured, npm's cache lacks a dependency (${r.cacheMiss})`);
      return false;
    }
    const commands = {
      "commander's help alone": [process.execPath, ['--input-type=module', '-e', COMMANDER_HELP]],
      'commander + undici': [process.execPath, ['--input-type=module', '-e', WITH_UNDICI]],
      'checkout --help': [process.execPath, [path.join(ROOT, 'bin', 'gamehost.js'), '--help']],
      'installed --help': [process.execPath, [path.join(r.installed, 'bin', 'gamehost.js'), '--help']],
    };
    const times = Object.fromEntries(Object.keys(commands).map((k) => [k, []]));
    for (const c of Object.values(commands)) once(c);
    for (let i = 0; i < RUNS; i++) for (const [name, c] of Object.entries(commands)) times[name].push(once(c));
    const m = Object.fromEntries(Object.entries(times).map(([k, t]) => [k, median(t)]));
    const overHelp = m['installed --help'] / m["commander's help alone"];
    const overUndici = m['installed --help'] / m['commander + undici'];
    console.log(`installed package (${RUNS} runs each, median wall time, environment PATH and HOME only):`);
    for (const [name, ms] of Object.entries(m)) console.log(`  ${name.padEnd(24)} ${ms.toFixed(1).padStart(7)} ms`);
    const verdict = (x) => (x <= BUDGET ? `ok (budget ${BUDGET}x)` : `OVER BUDGET (${BUDGET}x)`);
    console.log(`  installed --help over commander's help alone  ${overHelp.toFixed(2)}x  ${verdict(overHelp)}`);
    console.log(`  installed --help over commander + undici      ${overUndici.toFixed(2)}x  ${verdict(overUndici)}`);
    return overHelp <= BUDGET && overUndici <= BUDGET;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = runInstalledBench() ? 0 : 1;

// agents.ts loads two files from inside undici instead of the whole package. Paths inside a package are not its
// promise: its version is pinned, and these fail when an upgrade moves or changes what those files hold.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http2 from 'node:http2';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { UNDICI_FILES } from '../../src/api/agents.js';
import { tempDir } from '../helpers/cli.js';

const require = createRequire(import.meta.url);
const root = path.resolve(__dirname, '../..');

const AGENTS = pathToFileURL(path.join(root, 'dist/api/agents.js')).href;

// In a process of its own: the tests below, and other files in this worker, load the whole package, which brings
// the real connector. The process loads undici as a command does, then offers h2 to a server that speaks it.
const H2_PROBE = `
import { createRequire } from 'node:module';
const { Agents, request, UNDICI_FILES } = await import(process.env.AGENTS);
const require = createRequire(process.env.AGENTS);
new Agents({}, 5000).for(new URL('http://127.0.0.1/'));
const standIn = require.cache[require.resolve(UNDICI_FILES.h2)].exports.length === 0;
const http2Loaded = process.moduleLoadList.includes('NativeModule http2');
const agent = new (require(UNDICI_FILES.agent))({ allowH2: true, connect: { rejectUnauthorized: false } });
const res = await request(agent, { origin: process.env.ORIGIN, path: '/', method: 'GET' });
console.log(JSON.stringify({ standIn, http2Loaded, body: await res.body.text() }));
await agent.destroy();
`;

describe("the stand-in for undici's HTTP/2 connector", () => {
  it('is what a request loads, and it brings the real connector on its first call: h2 still works when offered', async () => {
    const dir = tempDir();
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '1', '-subj', '/CN=localhost'], { cwd: dir, stdio: 'ignore' });
    const server = http2.createSecureServer({ key: fs.readFileSync(path.join(dir, 'key.pem')), cert: fs.readFileSync(path.join(dir, 'cert.pem')) }, (req, res) => res.end(`HTTP/${req.httpVersion}`));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const child = spawn(process.execPath, ['--input-type=module', '-e', H2_PROBE], { env: { PATH: process.env.PATH, AGENTS, ORIGIN: origin } });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
      child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
      expect(await new Promise((resolve) => child.on('close', resolve)), stderr).toBe(0);
      // The real connector takes (client, socket); the stand-in passes on whatever it gets, and node:http2 waits.
      expect(JSON.parse(stdout)).toEqual({ standIn: true, http2Loaded: false, body: 'HTTP/2.0' });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe("undici's files that agents.ts loads", () => {
  it('undici is pinned to one exact version, the one installed', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const installed = JSON.parse(fs.readFileSync(path.join(path.dirname(require.resolve('undici/package.json')), 'package.json'), 'utf8')) as { version: string };
    expect(pkg.dependencies.undici).toMatch(/^\d+\.\d+\.\d+$/);
    expect(pkg.dependencies.undici).toBe(installed.version);
  });

  it('the Agent file holds the Agent the package exports, and the request file its request API', () => {
    const undici = require('undici') as typeof import('undici');
    expect(require(UNDICI_FILES.agent)).toBe(undici.Agent);
    expect(require(UNDICI_FILES.request)).toBe(undici.Dispatcher.prototype.request);
  });

  it("the HTTP/2 file is the client's h2 connector: a function of (client, socket), required by the client file", () => {
    // Read, not required: in this worker the module cache may hold the stand-in.
    const h2 = fs.readFileSync(require.resolve(UNDICI_FILES.h2), 'utf8');
    expect(h2).toMatch(/^function connectH2 \(client, socket\) \{$/m);
    expect(h2).toMatch(/^module\.exports = connectH2$/m);
    expect(h2).toContain("require('node:http2')");
    const client = fs.readFileSync(require.resolve('undici/lib/dispatcher/client.js'), 'utf8');
    expect(client).toContain(`require('./${path.basename(UNDICI_FILES.h2)}')`);
  });
});

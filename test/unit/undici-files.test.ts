// agents.ts loads two files from inside undici instead of the whole package. Paths inside a package are not its
// promise: its version is pinned, and these fail when an upgrade moves or changes what those files hold.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http2 from 'node:http2';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Agent } from 'undici';
import { describe, expect, it } from 'vitest';
import { Agents, request, UNDICI_FILES } from '../../src/api/agents.js';
import { tempDir } from '../helpers/cli.js';

const require = createRequire(import.meta.url);
const root = path.resolve(__dirname, '../..');

// First in the file: the tests below load the whole package, which brings the real connector.
describe("the stand-in for undici's HTTP/2 connector", () => {
  it('is what a request loads, and it brings the real connector on its first call: h2 still works when offered', async () => {
    new Agents({}, 5_000).for(new URL('http://127.0.0.1/')); // loads undici the way a command does
    const stand = require.cache[require.resolve(UNDICI_FILES.h2)];
    // The real connector takes (client, socket); the stand-in passes on whatever it gets.
    expect((stand?.exports as (...a: unknown[]) => unknown).length).toBe(0);

    const dir = tempDir();
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '1', '-subj', '/CN=localhost'], { cwd: dir, stdio: 'ignore' });
    const server = http2.createSecureServer({ key: fs.readFileSync(path.join(dir, 'key.pem')), cert: fs.readFileSync(path.join(dir, 'cert.pem')) }, (req, res) => res.end(`HTTP/${req.httpVersion}`));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const AgentClass = require(UNDICI_FILES.agent) as typeof Agent;
    const agent = new AgentClass({ allowH2: true, connect: { rejectUnauthorized: false } });
    try {
      const res = await request(agent, { origin: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, path: '/', method: 'GET' });
      expect(await res.body.text()).toBe('HTTP/2.0');
    } finally {
      await agent.destroy();
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
    const h2 = require(UNDICI_FILES.h2) as unknown;
    expect(typeof h2).toBe('function');
    expect((h2 as (...a: unknown[]) => unknown).length).toBe(2);
    const client = fs.readFileSync(require.resolve('undici/lib/dispatcher/client.js'), 'utf8');
    expect(client).toContain(`require('./${path.basename(UNDICI_FILES.h2)}')`);
    expect(fs.readFileSync(require.resolve(UNDICI_FILES.h2), 'utf8')).toContain("require('node:http2')");
  });
});

// `gamehost profile list`: the saved profiles, the current one marked; tokens only as which kinds are stored.
import type { Context } from '../../context.js';
import type { Profile } from '../../config/profiles.js';
import { defineCommand } from '../command.js';

export interface ListOptions {
  /** Every column at full width (--wide). */
  wide: boolean;
}

export default defineCommand({
  summary: 'List the saved profiles; the current one is marked *',
  options: [{ flags: '--wide', description: 'every column at full width, none left out' }],
  notes: 'With -q, prints the profile names alone, one a line.',
  examples: ['gamehost profile list', "gamehost profile list --json | jq -r '.profiles[].name'   # in CI"],
  parse: (v): ListOptions => ({ wide: v.wide }),
  run,
});

function tokenKinds(p: Profile): string {
  return [p.token && 'cloud', p.namespace_token && 'namespace'].filter(Boolean).join('+') || '-';
}

async function run(ctx: Context, o: ListOptions): Promise<void> {
  const [{ readProfiles }, { redactToken }, { writeJson }] = await Promise.all([
    import('../../config/profiles.js'),
    import('../../shared/redact.js'),
    import('../../output/json.js'),
  ]);
  const data = await readProfiles(ctx);
  const names = Object.keys(data.profiles).sort();
  if (ctx.global.json) {
    return writeJson(ctx, {
      current: data.current ?? null,
      profiles: names.map((name) => {
        const p = data.profiles[name]!;
        return {
          name,
          current: name === data.current,
          endpoint: p.endpoint,
          game: p.game ?? null,
          namespace: p.namespace ?? null,
          token: p.token ? redactToken(p.token) : null,
          namespace_token: p.namespace_token ? redactToken(p.namespace_token) : null,
        };
      }),
    });
  }
  // -q: the names alone, one a line.
  if (ctx.global.quiet) return void ctx.io.stdout.write(names.map((n) => n + '\n').join(''));
  if (!names.length) {
    ctx.info('No profiles yet: save one with `gamehost login`.');
    return;
  }
  const { renderTable } = await import('../../output/table.js');
  const tty = ctx.io.stdout.isTTY === true;
  const rows = names.map((name) => {
    const p = data.profiles[name]!;
    const cells = [name, p.endpoint, p.game ?? '-', p.namespace ?? '-', tokenKinds(p)];
    // Scripts get the mark as a last column they can test; people get it in front of the name.
    return tty ? [name === data.current ? '*' : '', ...cells] : [...cells, name === data.current ? 'current' : ''];
  });
  const head = ['NAME', 'ENDPOINT', 'GAME', 'NAMESPACE', 'TOKENS'];
  // Nothing is cut. The name and the endpoint are what a person picks a profile by, so they stay; the token kinds,
  // then the namespace and game ids (`profile show` has them) go when the row is too wide.
  const at = (i: number) => (tty ? i + 1 : i);
  const spec = { head: tty ? ['', ...head] : [...head, 'CURRENT'], rows, keep: [at(0), at(1)], shrink: [], drop: [at(4), at(3), at(2)] };
  ctx.io.stdout.write(renderTable(ctx, spec, ctx.io.stdout, o.wide));
}

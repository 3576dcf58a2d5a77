// A command declared once: the values `parse` receives are typed from the declaration (a renamed flag fails to
// compile, checked by `npm run typecheck`), and read from what commander parsed, converted, defaults included.
import { describe, expect, it } from 'vitest';
import { integer } from '../../src/commands/args.js';
import { defineCommand, readValues } from '../../src/commands/command.js';

const options = [
  { flags: '--game-mode <mode>', description: 'mode' },
  { flags: '--concurrency <n>', description: 'n', default: '8', value: integer({ min: 1 }) },
  { flags: '--publicity <p>', description: 'p', choices: ['public', 'private'] },
  { flags: '--tag <k=v>', description: 't', repeatable: true },
  { flags: '--no-resume', description: 'r' },
  { flags: '--watch [seconds]', description: 'w', value: integer() },
  { flags: '--dry-run', description: 'd' },
] as const;

describe('defineCommand', () => {
  it('types parse from the declaration', () => {
    const def = defineCommand({
      operands: ['<lobby-id>', '[name]'],
      options,
      summary: 'demo',
      examples: [],
      parse(v) {
        const typed: {
          lobbyId: string;
          name: string | undefined;
          gameMode: string | undefined;
          concurrency: number;
          publicity: 'public' | 'private' | undefined;
          tag: string[] | undefined;
          resume: boolean;
          watch: number | true | undefined;
          dryRun: boolean;
        } = v;
        // @ts-expect-error a flag that was never declared (or was renamed) is not there
        void v.mode;
        return typed;
      },
      run: async () => {},
    });
    expect(def.operands).toEqual(['<lobby-id>', '[name]']);
    expect(def.options).toBe(options);
  });

  it('reads operands and options by name, converted, with defaults and booleans', () => {
    const given = { gameMode: 'duos', concurrency: '8', tag: ['a=1', 'b=2'], resume: false, watch: true };
    expect(readValues(['<lobby-id>', '[name]'], options, ['abc', undefined], given)).toEqual({
      lobbyId: 'abc',
      name: undefined,
      gameMode: 'duos',
      concurrency: 8,
      publicity: undefined,
      tag: ['a=1', 'b=2'],
      resume: false,
      watch: true,
      dryRun: false,
    });
    expect(readValues([], options, [], { concurrency: '2' }).resume).toBe(true);
    expect(() => readValues([], options, [], { concurrency: '0' })).toThrow('--concurrency must be at least 1, not 0');
  });

  it('a --no- flag beside a value option of the same name: the name, false, or undefined', () => {
    const profile = [
      { flags: '--profile <name>', description: 'p' },
      { flags: '--no-profile', description: 'n' },
    ] as const;
    expect(readValues([], profile, [], { profile: 'ci' }).profile).toBe('ci');
    expect(readValues([], profile, [], { profile: false }).profile).toBe(false);
    expect(readValues([], profile, [], {}).profile).toBeUndefined();
  });
});

// `gamehost --help` is written without commander, from src/help.cts's table of the top level, so that it starts
// fast: it must stay what commander writes for the real tree (names, summaries, order), byte for byte, at any
// terminal width.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli.js';
import type { OutStream } from '../../src/shared/io.js';
import { TOP_LEVEL_HELP, topLevelHelp } from '../../src/help.cjs';

/** A stdout that keeps what is written; a terminal of `columns` when given. */
function stdout(columns?: number): OutStream & { text: string } {
  const stream = Object.assign(new Writable({ write: (chunk, _e, cb) => ((stream.text += String(chunk)), cb()) }), { text: '' });
  return columns === undefined ? stream : Object.assign(stream, { isTTY: true, columns });
}

async function commanderHelp(out: ReturnType<typeof stdout>): Promise<string> {
  const program = await buildProgram({ stdin: process.stdin, stdout: out, stderr: out }, async () => {});
  program.outputHelp();
  return out.text;
}

describe('the top-level help', () => {
  it("lists the real tree's commands and options, with their summaries, in order", async () => {
    const program = await buildProgram({ stdin: process.stdin, stdout: stdout(), stderr: stdout() }, async () => {});
    const help = program.createHelp();
    const sections = Object.fromEntries(TOP_LEVEL_HELP.sections);
    expect(sections['Commands:']).toEqual(help.visibleCommands(program).map((c) => [help.subcommandTerm(c), help.subcommandDescription(c)]));
    expect(sections['Options:']).toEqual(help.visibleOptions(program).map((o) => [help.optionTerm(o), help.optionDescription(o)]));
  });

  it.each([undefined, 0, 20, 39, 40, 41, 50, 60, 72, 80, 81, 100, 120, 160, 250])('is what commander writes, at width %s', async (columns) => {
    const out = stdout(columns);
    expect(topLevelHelp(out)).toBe(await commanderHelp(out));
  });
});

// The README is the front door and docs/ the reference: every relative link between them must lead somewhere.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const pages = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** GitHub's anchor for a heading: lower case, punctuation but '-' and '_' dropped, spaces to '-'. */
function anchor(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

function anchorsOf(file: string): Set<string> {
  const text = fs.readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchor(m[1]!)));
}

describe('documentation links', () => {
  it('the README links every page of docs/', () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    for (const page of pages.filter((p) => p !== 'README.md')) expect(readme, page).toContain(`](${page})`);
  });

  for (const page of pages) {
    it(`every relative link in ${page} leads to a file and heading that exist`, () => {
      const text = fs.readFileSync(path.join(ROOT, page), 'utf8').replace(/```[\s\S]*?```/g, '');
      const links = [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((l) => !/^[a-z]+:/i.test(l));
      for (const link of links) {
        const [file, hash] = link.split('#') as [string, string | undefined];
        const target = file ? path.resolve(path.dirname(path.join(ROOT, page)), file) : path.join(ROOT, page);
        expect(fs.existsSync(target), `${page}: ${link}`).toBe(true);
        if (hash) expect(anchorsOf(target).has(hash), `${page}: ${link}`).toBe(true);
      }
    });
  }
});

// The resume journal: one append-only JSON-lines file per upload under the state directory. The first line
// holds the key and the service's create response, then one line per finished part. Appends of a short line
// survive SIGKILL whole or not at all; a torn last line is ignored. No token is ever written here (presigned
// URLs carry their own short-lived signatures, which is what makes a resume possible).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { CreateBuildResponse } from '../api/types.js';
import { makeDirsSync } from '../shared/make-dirs.js';

export interface JournalKey {
  endpoint: string;
  game: string;
  tag: string;
  file: string;
  size: number;
  mtimeMs: number;
}

export interface JournalState {
  key: JournalKey;
  createdAt: number;
  build: CreateBuildResponse;
  done: Set<number>;
}

export class Journal {
  readonly path: string;

  constructor(dir: string, readonly key: JournalKey) {
    const id = createHash('sha256').update(JSON.stringify(key)).digest('hex').slice(0, 32);
    this.path = path.join(dir, `${id}.jsonl`);
  }

  /** The journal's state, or undefined when there is none (or it is unreadable, which means start over). */
  read(): JournalState | undefined {
    let text: string;
    try {
      text = fs.readFileSync(this.path, 'utf8');
    } catch {
      return undefined;
    }
    const lines = text.split('\n');
    let head: { key: JournalKey; created_at: number; build: CreateBuildResponse };
    try {
      head = JSON.parse(lines[0]!);
    } catch {
      return undefined;
    }
    if (JSON.stringify(head.key) !== JSON.stringify(this.key) || !head.build?.upload_id) return undefined;
    const done = new Set<number>();
    for (const line of lines.slice(1)) {
      try {
        const entry = JSON.parse(line) as { part?: unknown };
        if (typeof entry.part === 'number') done.add(entry.part);
      } catch {
        // a line torn by a kill: that part is simply sent again
      }
    }
    return { key: head.key, createdAt: head.created_at, build: head.build, done };
  }

  start(build: CreateBuildResponse, createdAt: number): void {
    makeDirsSync(path.dirname(this.path));
    const temp = `${this.path}.${process.pid}.tmp`;
    fs.writeFileSync(temp, JSON.stringify({ key: this.key, created_at: createdAt, build }) + '\n', { mode: 0o600 });
    fs.renameSync(temp, this.path);
  }

  partDone(part: number): void {
    fs.appendFileSync(this.path, JSON.stringify({ part }) + '\n');
  }

  exists(): boolean {
    return fs.existsSync(this.path);
  }

  remove(): void {
    fs.rmSync(this.path, { force: true });
  }
}

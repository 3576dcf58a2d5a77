// Public namespace tokens made with a cloud token (the matchmaker refuses cloud tokens), kept in the state directory
// so the next command reuses one rather than making another: one per endpoint, game and namespace. The file holds
// tokens, so it is written 0600 in a 0700 directory; it is state that may be lost without harm (a new token is made).
import fs from 'node:fs';
import path from 'node:path';
import type { Env } from '../shared/io.js';
import { writeFileWhole } from '../output/file.js';
import { stateDir } from './paths.js';
import { makeDirsSync } from '../shared/make-dirs.js';

export interface TokenPlace {
  endpoint: string;
  gameId: string;
  namespaceId: string;
}

interface KeptTokens {
  tokens: Record<string, { token: string; created: string }>;
}

export function namespaceTokensFile(env: Env): string {
  return path.join(stateDir(env), 'namespace-tokens.json');
}

const keyOf = (p: TokenPlace) => `${p.endpoint} ${p.gameId} ${p.namespaceId}`;

function read(file: string): KeptTokens {
  try {
    const data = JSON.parse(fs.readFileSync(file, 'utf8')) as KeptTokens;
    if (typeof data?.tokens === 'object' && data.tokens !== null && !Array.isArray(data.tokens)) return data;
  } catch {
    // Missing or unreadable: nothing kept, and the next token made replaces it.
  }
  return { tokens: {} };
}

/** The token kept for this endpoint, game and namespace, if any. */
export function keptNamespaceToken(env: Env, place: TokenPlace): string | undefined {
  const entry = read(namespaceTokensFile(env)).tokens[keyOf(place)];
  return typeof entry?.token === 'string' && entry.token !== '' ? entry.token : undefined;
}

/** Keeps `token` for this endpoint, game and namespace; written whole (src/output/file.ts), 0600. */
export function keepNamespaceToken(env: Env, place: TokenPlace, token: string, now: number): void {
  const file = namespaceTokensFile(env);
  makeDirsSync(path.dirname(file));
  const data = read(file);
  data.tokens[keyOf(place)] = { token, created: new Date(now).toISOString() };
  writeFileWhole(file, JSON.stringify(data, null, 2) + '\n');
}

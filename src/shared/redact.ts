// Tokens are shown to people only in a redacted form (`cloud.abc…xyz`): enough to tell two apart, never
// enough to use. Anything that prints text of unknown origin can also scrub known tokens out of it.
import type { Env } from './io.js';

// Under this many characters after the label, even the first and last three would say too much.
const MIN_SHOWN = 12;

/** `cloud.eyJhbGci….sig` → `cloud.eyJ…sig`: the kind label, then three characters from each end. */
export function redactToken(token: string | undefined): string {
  if (!token) return '-';
  const dot = token.indexOf('.');
  const label = dot > 0 && dot <= 64 ? token.slice(0, dot + 1) : '';
  const rest = token.slice(label.length);
  if (rest.length < MIN_SHOWN) return `${label}…`;
  return `${label}${rest.slice(0, 3)}…${rest.slice(-3)}`;
}

/**
 * The service's token shape: a kind label (`cloud`, `pub_<ns>`, `dev_<ns>`), then at least two long base64url
 * segments (a host name such as cloud.example.com has short ones, so it is left alone).
 */
const TOKEN_SHAPE = /\b(?:cloud|pub_[0-9a-f-]*|dev_[0-9a-f-]*)\.[\w-]{16,}\.[\w-]{16,}(?:\.[\w-]+)*/gi;

/** The token values this process was given through its environment. */
export function envTokens(env: Env): string[] {
  return [env.GAMEHOST_TOKEN, env.GAMEHOST_NAMESPACE_TOKEN, env.RIVET_TOKEN, env.GAMEHOST_EMULATOR_ADMIN_TOKEN].filter((t): t is string => !!t);
}

/** Replaces every known token, and anything shaped like one, with its redacted form. */
export function scrubTokens(text: string, known: (string | undefined)[] = []): string {
  let out = text;
  // Longest first, so a token that contains another is replaced whole.
  for (const token of [...new Set(known.filter((t): t is string => !!t && t.length >= 8))].sort((a, b) => b.length - a.length)) {
    out = out.split(token).join(redactToken(token));
  }
  return out.replace(TOKEN_SHAPE, (m) => redactToken(m));
}

/**
 * A URL with its password (and any password, secret, key or token in its query) replaced by `***`, for logs.
 * Read as text, not parsed: whatever the string holds (a bare `@` or `/` in a password), nothing after the user
 * name in the user info survives.
 */
export function redactUrl(text: string): string {
  const m = /^([a-z][\w+.-]*:)(\/\/)?([^]*)$/i.exec(text);
  if (!m) return '***';
  // No authority (scheme:opaque): nothing of it can be shown safely.
  if (!m[2]) return `${m[1]}***`;
  let rest = m[3]!;
  const queryAt = rest.search(/[?#]/);
  const head = queryAt === -1 ? rest : rest.slice(0, queryAt);
  const at = head.lastIndexOf('@');
  if (at !== -1) {
    const colon = head.indexOf(':');
    if (colon !== -1 && colon < at) rest = `${head.slice(0, colon)}:***${rest.slice(at)}`;
  }
  rest = rest.replace(/([?&][^=&#]*(?:pass|secret|token|key)[^=&#]*=)[^&#]*/gi, '$1***');
  return `${m[1]}//${rest}`;
}

import { describe, expect, it } from 'vitest';
import { envTokens, redactToken, redactUrl, scrubTokens } from '../../src/shared/redact.js';

describe('redactToken', () => {
  it('keeps the kind label and three characters from each end', () => {
    expect(redactToken('cloud.abcdefghijklmnop.qrstuvwxyz')).toBe('cloud.abc…xyz');
    expect(redactToken('pub_9d2c7e41-5b6a-4f3e-9c8d-7a6b5c4d3e2f.eyJraW5kIjoicHViIn0.c2ln')).toBe('pub_9d2c7e41-5b6a-4f3e-9c8d-7a6b5c4d3e2f.eyJ…2ln');
    expect(redactToken('abcdefghijklmnopqrstuvwxyz')).toBe('abc…xyz');
  });
  it('shows nothing of a short token', () => {
    expect(redactToken('cloud.short')).toBe('cloud.…');
    expect(redactToken('tiny')).toBe('…');
    expect(redactToken(undefined)).toBe('-');
  });
});

describe('envTokens', () => {
  it('names every token the environment gives, the emulator admin token too', () => {
    const env = { GAMEHOST_TOKEN: 'cloud-token', GAMEHOST_NAMESPACE_TOKEN: 'ns-token', RIVET_TOKEN: '', GAMEHOST_EMULATOR_ADMIN_TOKEN: 'admin-token-0123' };
    expect(envTokens(env)).toEqual(['cloud-token', 'ns-token', 'admin-token-0123']);
    expect(scrubTokens('bad token admin-token-0123', envTokens(env))).toBe('bad token adm…123');
  });
});

describe('scrubTokens', () => {
  it('replaces known tokens and anything shaped like a service token', () => {
    const known = 'not-shaped-like-a-token-but-secret';
    expect(scrubTokens(`a ${known} b`, [known])).toBe('a not…ret b');
    const jwtLike = 'cloud.eyJhbGciOiJIUzI1NiJ9.eyJraW5kIjoiY2xvdWQifQ.c2lnbmF0dXJl';
    expect(scrubTokens(`Bearer ${jwtLike}!`)).toBe('Bearer cloud.eyJ…XJl!');
  });
  it('leaves host names and ordinary text alone', () => {
    const text = 'could not reach cloud.example.com: connection refused; see pub_docs.rivet.gg';
    expect(scrubTokens(text)).toBe(text);
  });
});

describe('redactUrl', () => {
  it('hides the password and secret-looking query values, keeps the rest to tell databases apart', () => {
    expect(redactUrl('postgres://app:s3cr%2Ft@db.internal:5432/gamehost?sslmode=require&password=x')).toBe(
      'postgres://app:***@db.internal:5432/gamehost?sslmode=require&password=***',
    );
    expect(redactUrl('postgresql://db.internal/gamehost')).toBe('postgresql://db.internal/gamehost');
    expect(redactUrl('postgres://app@/gamehost?host=/var/run/postgresql&sslkey=/k')).toBe('postgres://app@/gamehost?host=/var/run/postgresql&sslkey=***');
  });

  it('a password with a bare @ or / in it is hidden whole; an opaque URL shows its scheme alone', () => {
    expect(redactUrl('postgres://app:p@ss/w@db/x')).toBe('postgres://app:***@db/x');
    expect(redactUrl('postgres:app:pw@host')).toBe('postgres:***');
    expect(redactUrl('app:pw@host')).toBe('app:***');
    expect(redactUrl('not a url')).toBe('***');
  });
});

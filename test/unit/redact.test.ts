import { describe, expect, it } from 'vitest';
import { envTokens, redactToken, scrubTokens } from '../../src/config/redact.js';

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

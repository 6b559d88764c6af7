import { API_KEY_PREFIX, apiKeyHash, isWellFormedApiKey, looksLikeApiKey, newApiKeySecret } from '../../../services/identity/api-key-format';

/** Changes one character of the body to another base62 character, keeping the shape. */
function withBodyCharChanged(key: string, at: number): string {
  const index = API_KEY_PREFIX.length + at;
  const replacement = key[index] === 'a' ? 'b' : 'a';
  return `${key.slice(0, index)}${replacement}${key.slice(index + 1)}`;
}

describe('API key format', () => {
  it('makes keys that start with plat_, hold no dot, and check out', () => {
    const made = Array.from({ length: 200 }, () => newApiKeySecret());
    for (const { key, prefix, hash } of made) {
      expect(key).toMatch(/^plat_[0-9A-Za-z]{38}$/);
      expect(key).not.toContain('.');
      expect(isWellFormedApiKey(key)).toBe(true);
      expect(key.startsWith(prefix)).toBe(true);
      expect(prefix).toMatch(/^plat_[0-9A-Za-z]{8}$/);
      expect(hash.equals(apiKeyHash(key))).toBe(true);
      expect(hash).toHaveLength(32);
    }
    expect(new Set(made.map(({ key }) => key)).size).toBe(made.length);
  });

  it.each([
    ['empty', ''],
    ['no prefix', 'abc'],
    ['another prefix', `sk_${'a'.repeat(38)}`],
    ['too short', `${API_KEY_PREFIX}${'a'.repeat(37)}`],
    ['too long', `${API_KEY_PREFIX}${'a'.repeat(39)}`],
    ['a character outside base62', `${API_KEY_PREFIX}${'a'.repeat(31)}-${'a'.repeat(6)}`],
    ['a JWT', 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln'],
  ])('refuses a value of the wrong shape: %s', (_label, value) => {
    expect(isWellFormedApiKey(value)).toBe(false);
  });

  it('refuses a key with any one body character mistyped (checksum)', () => {
    const { key } = newApiKeySecret();
    for (let at = 0; at < 32; at += 1) expect(isWellFormedApiKey(withBodyCharChanged(key, at))).toBe(false);
  });

  it('refuses a key whose checksum was changed', () => {
    const { key } = newApiKeySecret();
    const last = key.at(-1) === '0' ? '1' : '0';
    expect(isWellFormedApiKey(`${key.slice(0, -1)}${last}`)).toBe(false);
  });

  it('tells keys from other bearer values by the prefix alone', () => {
    expect(looksLikeApiKey(newApiKeySecret().key)).toBe(true);
    expect(looksLikeApiKey(`${API_KEY_PREFIX}mistyped`)).toBe(true);
    expect(looksLikeApiKey('eyJhbGciOiJFUzI1NiJ9.e30.c2ln')).toBe(false);
  });
});

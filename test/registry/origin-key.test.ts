import { describe, expect, it } from 'vitest';
import { originKey } from '../../src/registry/origin-key';

describe('originKey', () => {
  it.each([
    ['https://api.example.com/v1/chat?stream=true#x', 'https://api.example.com'],
    ['HTTPS://API.Example.COM/Path', 'https://api.example.com'],
    ['https://api.example.com:443/', 'https://api.example.com'],
    ['http://api.example.com:80/', 'http://api.example.com'],
    ['http://api.example.com:443/', 'http://api.example.com:443'],
    ['https://api.example.com:8443/x', 'https://api.example.com:8443'],
    ['wss://stream.example.com:443/socket', 'wss://stream.example.com'],
    ['https://user:secret@api.example.com/x', 'https://api.example.com'],
    ['http://[::1]:8080/health', 'http://[::1]:8080'],
    ['http://127.0.0.1:3000', 'http://127.0.0.1:3000'],
    ['https://bücher.example/', 'https://xn--bcher-kva.example'],
    ['redis://Cache.Internal:6379/0', 'redis://cache.internal:6379'],
  ])('keys %s as %s', (input, expected) => {
    expect(originKey(input)).toBe(expected);
  });

  it('takes a URL object', () => {
    expect(originKey(new URL('https://Example.com:443/a/b'))).toBe('https://example.com');
  });

  it('takes a Request', () => {
    expect(originKey(new Request('https://api.example.com:443/v1', { method: 'POST', body: '{}' }))).toBe(
      'https://api.example.com',
    );
  });

  it('gives one key to every path, query and credential of one origin', () => {
    const keys = new Set(
      ['https://a.example/x', 'https://A.example:443/y?z', 'https://u:p@a.example/'].map((u) => originKey(u)),
    );
    expect([...keys]).toEqual(['https://a.example']);
  });

  it('refuses a relative URL with a TypeError that says why and keeps the parser error as the cause', () => {
    let caught: unknown;
    try {
      originKey('/v1/chat');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(TypeError);
    expect((caught as Error).message).toBe(
      'resilix: originKey could not parse "/v1/chat" as an absolute URL; a relative URL has no origin (resolve it against a base first)',
    );
    expect((caught as Error).cause).toBeInstanceOf(Error);
  });

  it('refuses a URL without a host', () => {
    expect(() => originKey('data:text/plain,hello')).toThrow(
      new TypeError(
        'resilix: originKey needs a URL with a host; a "data:" URL has none, so it has no origin to key by',
      ),
    );
    expect(() => originKey('file:///etc/hosts')).toThrow(TypeError);
    expect(() => originKey('mailto:ops@example.com')).toThrow(TypeError);
  });

  it.each([
    [42, 'number'],
    [null, 'null'],
    [undefined, 'undefined'],
    [{}, 'object'],
  ])('refuses %s with a TypeError naming what it got', (input, what) => {
    expect(() => originKey(input as never)).toThrow(
      new TypeError(`resilix: originKey takes a URL string, a URL or a Request; received ${what}`),
    );
  });

  it('cuts long garbage in its message', () => {
    expect(() => originKey('x'.repeat(500))).toThrow(`"${'x'.repeat(80)}..."`);
  });
});

/** Unparseable input longer than this is cut in the error message. */
const INPUT_SHOWN_CHARS = 80; // ours: enough to recognise a relative path, short enough for a log line

/**
 * The registry key for an outbound request: its origin, `scheme://host[:port]`, lowercased, with
 * the scheme's default port dropped (`HTTPS://API.Example.com:443/v1?q` -> `https://api.example.com`).
 * Takes what `fetch` takes: a URL string, a `URL` or a `Request`. User info, path, query and
 * fragment are never part of the key, so credentials in a URL never reach a key or a log.
 *
 * Parsing is the platform's WHATWG `URL`, so hosts are normalised the way `fetch` will see them
 * (IDNA to punycode, IPv4 forms canonicalised, IPv6 in brackets). Throws a `TypeError` for a
 * relative URL, a URL without a host (`data:`, `mailto:`, `file:///`) or anything else.
 */
export function originKey(input: string | URL | Request): string {
  const url = toUrl(input);
  if (url.host === '') {
    throw new TypeError(
      `resilix: originKey needs a URL with a host; a "${url.protocol}" URL has none, so it has no origin to key by`,
    );
  }
  // Special schemes (http, https, ws, wss, ftp) arrive with the host lowercased and the default
  // port already dropped by the URL parser; any other scheme keeps its host's case, hence the
  // final lowercase (scheme and host are case-insensitive, RFC 3986 §3.1 and §3.2.2).
  return `${url.protocol}//${url.host}`.toLowerCase();
}

function toUrl(input: unknown): URL {
  if (typeof input === 'string') return parse(input);
  if (typeof input === 'object' && input !== null) {
    if (input instanceof URL) return input;
    // A Request, or a URL from another realm: both carry an absolute URL string.
    const request = input as { url?: unknown; href?: unknown };
    if (typeof request.url === 'string') return parse(request.url);
    if (typeof request.href === 'string') return parse(request.href);
  }
  throw new TypeError(
    `resilix: originKey takes a URL string, a URL or a Request; received ${input === null ? 'null' : typeof input}`,
  );
}

function parse(text: string): URL {
  try {
    return new URL(text);
  } catch (cause) {
    const shown = text.length > INPUT_SHOWN_CHARS ? `${text.slice(0, INPUT_SHOWN_CHARS)}...` : text;
    throw new TypeError(
      `resilix: originKey could not parse ${JSON.stringify(shown)} as an absolute URL; ` +
        'a relative URL has no origin (resolve it against a base first)',
      { cause },
    );
  }
}

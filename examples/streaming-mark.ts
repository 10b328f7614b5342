/**
 * A streamed completion (an LLM, server-sent events, any long body) through resilix, with
 * `ctx.mark()` at the first token. Read docs/streaming.md first; the short version:
 *
 * - Consume the whole stream INSIDE `execute`, so the call holds its limiter slot while the
 *   upstream is still working for it (a 45 s stream is 45 s of the upstream's concurrency).
 * - Call `ctx.mark()` when the first token arrives. The limiter then learns the time to first
 *   token (say 280 ms) instead of the whole duration (45 s): without the mark a healthy upstream
 *   looks 160 times slower than it is, and the limiter clamps to its minimum.
 *
 * `resilientFetch` is the wrong tool here: it settles at the response headers and hands you the
 * body after its slot is released.
 *
 * Copy it into your app as it is: it imports `resilix` as your app does.
 */
import type { Executor } from 'resilix';

export interface StreamingClientOptions {
  /** The upstream's streaming endpoint. */
  url: string;
  /** The fetch to call; default the global one. */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
}

/** An HTTP error that carries the status and headers, so the default classifier can read them. */
export class UpstreamStatusError extends Error {
  constructor(
    readonly status: number,
    readonly headers: Headers,
  ) {
    super(`the upstream answered ${status}`);
    this.name = 'UpstreamStatusError';
  }
}

/**
 * Returns `complete(prompt, onToken)`, which streams one completion through `upstream` (a
 * pipeline with a limiter and a generous timeout) and resolves with the whole text.
 */
export function streamingClient(upstream: Executor, options: StreamingClientOptions) {
  const send = options.fetch ?? ((input: string, init: RequestInit) => fetch(input, init));
  return function complete(prompt: string, onToken: (token: string) => void, signal?: AbortSignal): Promise<string> {
    return upstream.execute(
      async (ctx) => {
        const response = await send(options.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ prompt, stream: true }),
          signal: ctx.signal, // our deadline and the caller's abort both stop the stream
        });
        // Not a stream: throw with the status, so a 429/503 teaches the limiter "overload". The body
        // is cancelled first: left open, its connection would outlive the slot the call gives back.
        if (!response.ok || response.body === null) {
          await response.body?.cancel().catch(() => {});
          throw new UpstreamStatusError(response.status, response.headers);
        }
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let text = '';
        try {
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            if (value === '') continue;
            // HERE: the first token. The latency sample ends now; the slot stays held until the end.
            ctx.mark();
            text += value;
            onToken(value);
          }
        } catch (error) {
          // onToken threw, or the read failed: stop the stream, or the upstream would go on
          // generating (and billing) for a call the limiter no longer counts.
          await reader.cancel(error).catch(() => {});
          throw error;
        }
        return text;
      },
      { signal },
    );
  };
}

import { describe, expect, it } from 'vitest';
import { streamingClient, UpstreamStatusError } from '../../examples/streaming-mark';
import { pipeline } from '../../src/pipeline/pipeline';
import { FakeClock, deferred, flush } from '../helpers/fake-clock';
import { spyPolicy } from '../helpers/spy-policy';

/** A streamed answer the test feeds by hand, token by token, on the fake clock. */
function scriptedStream() {
  let push!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({
    start: (c) => {
      push = c;
    },
  });
  const encoder = new TextEncoder();
  return {
    body,
    token: (text: string) => push.enqueue(encoder.encode(text)),
    end: () => push.close(),
  };
}

describe('the streaming example (examples/streaming-mark.ts)', () => {
  it('teaches the limiter the time to first token, not the length of the stream', async () => {
    const clock = new FakeClock();
    const spy = spyPolicy(clock);
    const stream = scriptedStream();
    const headers = deferred<Response>();
    const complete = streamingClient(pipeline(spy), {
      url: 'https://llm.example.com/v1/complete',
      fetch: () => headers.promise,
    });
    const tokens: string[] = [];
    const done = complete('hello', (t) => tokens.push(t));

    clock.advance(120);
    headers.resolve(new Response(stream.body, { status: 200 }));
    await flush(10);
    clock.advance(160); // first token at 280 ms
    stream.token('Hel');
    await flush(10);
    for (let i = 0; i < 9; i++) {
      clock.advance(5_000);
      stream.token('lo');
      await flush(10);
    }
    clock.advance(19_720); // the stream ends at 65 s
    stream.end();

    expect(await done).toBe(`Hel${'lo'.repeat(9)}`);
    expect(tokens).toHaveLength(10);
    expect(spy.observations).toHaveLength(1);
    expect(spy.observations[0]).toMatchObject({ verdict: 'ok', latencyMs: 280, durationMs: 65_000 });
  });

  it('holds the slot until the stream ends: the call settles only with the last token', async () => {
    const clock = new FakeClock();
    const spy = spyPolicy(clock);
    const stream = scriptedStream();
    const complete = streamingClient(pipeline(spy), {
      url: 'https://llm.example.com/v1/complete',
      fetch: () => Promise.resolve(new Response(stream.body)),
    });
    const done = complete('hello', () => {});
    stream.token('a');
    await flush(10);
    expect(spy.observations).toHaveLength(0);
    stream.end();
    await done;
    expect(spy.observations).toHaveLength(1);
  });

  it('classifies a 429 before the stream as overload, with its Retry-After', async () => {
    const spy = spyPolicy(new FakeClock());
    const complete = streamingClient(pipeline(spy), {
      url: 'https://llm.example.com/v1/complete',
      fetch: () => Promise.resolve(new Response('slow down', { status: 429, headers: { 'retry-after': '3' } })),
    });
    await expect(complete('hello', () => {})).rejects.toBeInstanceOf(UpstreamStatusError);
    expect(spy.observations[0]).toMatchObject({ verdict: 'overload', retryAfterMs: 3000 });
  });

  it('cancels the upstream stream when onToken throws, as the slot is given back', async () => {
    const spy = spyPolicy(new FakeClock());
    let cancelled: unknown;
    const body = new ReadableStream<Uint8Array>({
      start: (c) => c.enqueue(new TextEncoder().encode('tok')),
      cancel: (reason) => {
        cancelled = reason;
      },
    });
    const complete = streamingClient(pipeline(spy), {
      url: 'https://llm.example.com/v1/complete',
      fetch: () => Promise.resolve(new Response(body)),
    });
    const bug = new Error('onToken broke');
    await expect(
      complete('hello', () => {
        throw bug;
      }),
    ).rejects.toBe(bug);
    expect(cancelled).toBe(bug);
    expect(spy.observations).toHaveLength(1);
  });

  it('cancels the body of an answer that is not a stream before it throws', async () => {
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      cancel: () => {
        cancelled = true;
      },
    });
    const complete = streamingClient(pipeline(spyPolicy(new FakeClock())), {
      url: 'https://llm.example.com/v1/complete',
      fetch: () => Promise.resolve(new Response(body, { status: 503 })),
    });
    await expect(complete('hello', () => {})).rejects.toBeInstanceOf(UpstreamStatusError);
    expect(cancelled).toBe(true);
  });

  it('sends the call signal with the request, so an abort stops the stream', async () => {
    const spy = spyPolicy(new FakeClock());
    let sent: RequestInit | undefined;
    const complete = streamingClient(pipeline(spy), {
      url: 'https://llm.example.com/v1/complete',
      fetch: (_url, init) => {
        sent = init;
        return new Promise<Response>((_resolve, reject) =>
          init.signal!.addEventListener('abort', () => reject(init.signal!.reason)),
        );
      },
    });
    const controller = new AbortController();
    const done = complete('hello', () => {}, controller.signal);
    controller.abort(new Error('user closed the tab'));
    await expect(done).rejects.toThrow('user closed the tab');
    expect(sent!.signal!.aborted).toBe(true);
    expect(JSON.parse(String(sent!.body))).toEqual({ prompt: 'hello', stream: true });
  });
});

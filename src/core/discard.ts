/**
 * Cancels the body of a value no caller will see: one a retry replaces, or one that arrives after
 * its caller left or timed out. An unread `Response` body holds its connection until it is read,
 * cancelled or collected (undici asks for one of the first two). Anything else is left.
 */
export function discard(value: unknown): void {
  try {
    const body = (value as { body?: unknown } | null | undefined)?.body;
    // A web stream only (a user's own `body` is not ours to call). One already read, or locked by a reader the
    // classifier took, rejects the cancel: nothing to do.
    if (typeof ReadableStream === 'function' && body instanceof ReadableStream) body.cancel().catch(() => {});
  } catch {
    // A caller's value whose `body` getter throws: it is dropped all the same.
  }
}

import { ResilixError, hasResilixCode, type ResilixErrorOptions } from '../errors/resilix-error';

export interface TooManyKeysErrorOptions extends ResilixErrorOptions {
  /** The registry's cap, every key of which had calls in flight or queued. */
  maxKeys: number;
  /** The key that found no room. */
  key: string;
}

/** Keys longer than this are cut in the message (a key can be a long tenant or route id). */
const KEY_SHOWN_CHARS = 100; // ours: keeps a log line readable

/**
 * A `KeyRegistry` was at `maxKeys` and every key had calls in flight or queued, so none could be
 * evicted and no pipeline was made for the new key: the call was not made (ADR-0061).
 */
export class TooManyKeysError extends ResilixError {
  override readonly name = 'TooManyKeysError';
  readonly code = 'ERR_RESILIX_TOO_MANY_KEYS' as const;
  readonly maxKeys: number;
  readonly key: string;

  constructor(options: TooManyKeysErrorOptions) {
    const shown = options.key.length > KEY_SHOWN_CHARS ? `${options.key.slice(0, KEY_SHOWN_CHARS)}...` : options.key;
    super(
      `resilix: the key registry is full (all ${options.maxKeys} keys have calls in flight or queued), ` +
        `so no pipeline was made for key ${JSON.stringify(shown)} and the call was not made; ` +
        'raise maxKeys or give the registry an overflow policy',
      options,
    );
    this.maxKeys = options.maxKeys;
    this.key = options.key;
    this.brand(this.code);
  }
}

export function isTooManyKeysError(error: unknown): error is TooManyKeysError {
  return hasResilixCode(error, 'ERR_RESILIX_TOO_MANY_KEYS');
}

// opossum 10 ships no types (nor does @types/opossum match it); the benchmark needs only this much of it.
declare module 'opossum' {
  export default class CircuitBreaker<R = unknown> {
    constructor(action: (...args: never[]) => Promise<R>, options?: Record<string, unknown>);
    fire(...args: unknown[]): Promise<R>;
    shutdown(): void;
  }
}

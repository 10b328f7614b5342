import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { breaker } from 'resilix';

const require = createRequire(import.meta.url);

describe('subscriptions are disposable', () => {
  it('carry [Symbol.dispose] where the runtime has Symbol.dispose', {
    skip: typeof Symbol.dispose !== 'symbol' && 'no Symbol.dispose before Node 18.18',
  }, () => {
    const b = breaker();
    const hold = b.isolate();
    assert.equal(b.state, 'isolated');
    hold[Symbol.dispose]();
    assert.equal(b.state, 'closed');
  });

  it("fall back to Symbol.for('Symbol.dispose') where Symbol has no dispose, assigning nothing", () => {
    // The CommonJS build, evaluated with a `Symbol` that has no `dispose`: what a Node 18.0-18.17
    // process is. (A fresh vm context will not do: V8 12+ has Symbol.dispose natively.)
    const code = readFileSync(require.resolve('resilix'), 'utf8');
    // Symbol's own members but dispose (a Proxy cannot hide it: it is non-configurable).
    const SymbolWithoutDispose = (description) => Symbol(description);
    for (const key of Object.getOwnPropertyNames(Symbol)) {
      if (!['dispose', 'asyncDispose', 'length', 'name', 'prototype'].includes(key))
        SymbolWithoutDispose[key] = Symbol[key];
    }
    const before = Object.getOwnPropertyNames(Symbol).sort();
    const module = { exports: {} };
    new Function('module', 'exports', 'Symbol', code)(module, module.exports, SymbolWithoutDispose);
    const b = module.exports.breaker();
    const hold = b.isolate();
    const fallback = Symbol.for('Symbol.dispose');
    assert.equal(typeof hold[fallback], 'function');
    hold[fallback]();
    assert.equal(b.state, 'closed');
    assert.deepEqual(Object.getOwnPropertyNames(Symbol).sort(), before);
  });
});

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import vm from 'node:vm';
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

  it("fall back to Symbol.for('Symbol.dispose') in a realm without Symbol.dispose, assigning no global", () => {
    // A fresh V8 context has no Symbol.dispose (Node adds it to its main context only): the
    // CommonJS build, loaded there, is what a Node 18.0-18.17 process sees.
    const code = readFileSync(require.resolve('resilix'), 'utf8');
    const sandbox = {
      module: { exports: {} },
      performance,
      setTimeout,
      clearTimeout,
      queueMicrotask,
      AbortController,
      AbortSignal,
      console,
    };
    sandbox.exports = sandbox.module.exports;
    const context = vm.createContext(sandbox);
    assert.equal(vm.runInContext('typeof Symbol.dispose', context), 'undefined');
    vm.runInContext(code, context);
    const { breaker: isolatedBreaker } = sandbox.module.exports;
    const b = isolatedBreaker();
    const hold = b.isolate();
    const fallback = Symbol.for('Symbol.dispose');
    assert.equal(typeof hold[fallback], 'function');
    hold[fallback]();
    assert.equal(b.state, 'closed');
    assert.equal(vm.runInContext('typeof Symbol.dispose', context), 'undefined');
  });
});

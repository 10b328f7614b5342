import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import * as esm from 'resilix';

const require = createRequire(import.meta.url);
const cjs = require('resilix');

describe('the package loads as an ES module and as CommonJS', () => {
  it('exports the same names from import and require', () => {
    assert.deepEqual(Object.keys(esm).sort(), Object.keys(cjs).sort());
    for (const name of [
      'pipeline',
      'breaker',
      'limiter',
      'bulkhead',
      'timeout',
      'resilientFetch',
      'KeyRegistry',
      'retryAfterHeader',
    ]) {
      // biome-ignore lint/performance/noDynamicNamespaceImportAccess: the test looks exports up by name; nothing here is bundled
      assert.equal(typeof esm[name], 'function', name);
    }
  });

  it('recognises an error from the other copy (the dual-package case) by its brand', () => {
    const fromCjs = new cjs.LimitExceededError();
    assert.equal(fromCjs instanceof esm.LimitExceededError, false);
    assert.equal(esm.isLimitExceededError(fromCjs), true);
    assert.equal(esm.isResilixError(fromCjs), true);
  });

  it('depends on nothing at run time', () => {
    const manifest = require('resilix/package.json');
    assert.deepEqual(manifest.dependencies ?? {}, {});
  });
});

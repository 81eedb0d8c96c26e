/**
 * Where the hub may upload: only the configured default and under the configured prefixes, compared
 * parsed, so that no request makes the hub send a recording to another host (a look-alike host, a
 * prefix without its segment boundary, dot segments, credentials in the URL, another scheme or port).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UploadDestinations } from '../../../../../hub/plugins/transfers/src/upload-destinations.js';

describe('upload destinations', () => {
  const d = new UploadDestinations('https://store.example/files', ['https://archive.example/tus/']);

  it('uses the default when a request names none, and accepts what falls under a prefix', () => {
    assert.equal(d.resolve(undefined), 'https://store.example/files');
    assert.equal(d.resolve('https://store.example/files'), 'https://store.example/files');
    assert.equal(d.resolve('https://store.example/files/site-a'), 'https://store.example/files/site-a');
    assert.equal(d.resolve('https://archive.example/tus/cam'), 'https://archive.example/tus/cam');
  });

  it('refuses any other host, port, scheme or path, with target_not_allowed or bad_request', () => {
    for (const url of [
      'https://evil.example/files',
      'https://store.example.evil.example/files',
      'https://store.example:8443/files',
      'http://store.example/files',
      'https://store.example/filesystem',
      'https://store.example/files/../admin',
      'https://archive.example/tusk',
      'http://127.0.0.1:9/files',
    ]) {
      assert.throws(() => d.resolve(url), { code: 'target_not_allowed' }, url);
    }
    for (const url of ['https://user:pw@store.example/files', 'file:///etc/passwd', 'not a url']) {
      assert.throws(() => d.resolve(url), { code: 'bad_request' }, url);
    }
  });

  it('refuses every upload when nothing is configured, and a request without a destination when only prefixes are', () => {
    assert.throws(() => new UploadDestinations(undefined, []).resolve(undefined), { code: 'service_unavailable' });
    assert.throws(() => new UploadDestinations(undefined, []).resolve('https://store.example/files'), { code: 'service_unavailable' });
    const prefixesOnly = new UploadDestinations(undefined, ['https://store.example/files']);
    assert.throws(() => prefixesOnly.resolve(undefined), { code: 'bad_request' });
    assert.equal(prefixesOnly.resolve('https://store.example/files/x'), 'https://store.example/files/x');
  });
});

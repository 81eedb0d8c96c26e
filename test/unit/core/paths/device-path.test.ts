import assert from 'node:assert/strict';
import { test } from 'node:test';
import { devicePath } from '../../../../core/src/paths/device-path.js';
import { isLookoutError } from '../../../../core/src/errors/lookout-error.js';

test('a spec path lands under the data root, and / on a device is the path itself', () => {
  assert.equal(devicePath('/tmp/dev-1', '/data/config/edge_v3_layer.env'), '/tmp/dev-1/data/config/edge_v3_layer.env');
  assert.equal(devicePath('/tmp/dev-1', 'data/models/x.onnx'), '/tmp/dev-1/data/models/x.onnx');
  assert.equal(devicePath('/', '/data/models/x.onnx'), '/data/models/x.onnx');
});

test('a path that escapes the data root is refused with forbidden', () => {
  for (const escaping of ['/data/../../etc/passwd', '../outside', '/..', 'data/models/../../../x']) {
    assert.throws(
      () => devicePath('/tmp/dev-1', escaping),
      (e) => isLookoutError(e, 'forbidden'),
      escaping,
    );
  }
});

test('a name that merely starts with two dots stays inside the root', () => {
  assert.equal(devicePath('/tmp/dev-1', '/data/models/..v2.onnx'), '/tmp/dev-1/data/models/..v2.onnx');
  assert.equal(devicePath('/tmp/dev-1', '/..hidden'), '/tmp/dev-1/..hidden');
});

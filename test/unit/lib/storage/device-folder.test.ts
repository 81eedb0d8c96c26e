import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deviceFolderOf, namesOneFolder } from '../../../../lib/storage/index.js';

describe('folders named after a device', () => {
  it('fills every {device} of the template with the id', () => {
    assert.equal(deviceFolderOf('/srv/{device}/data/{device}.d', 'cam-1'), '/srv/cam-1/data/cam-1.d');
    assert.equal(deviceFolderOf('/srv/logs', 'cam-1'), '/srv/logs');
    // Dots inside an id are a name like any other.
    assert.equal(deviceFolderOf('/srv/{device}', '...'), '/srv/...');
    assert.equal(namesOneFolder('cam.1'), true);
  });

  it('names no folder for an id that would climb out or name another', () => {
    for (const id of ['', '.', '..', 'a/b', '../x', 'a\\b', '..\\x']) {
      assert.equal(namesOneFolder(id), false, id);
      assert.equal(deviceFolderOf('/srv/{device}/logs', id), undefined, id);
    }
  });
});

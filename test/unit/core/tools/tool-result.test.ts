import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LookoutError } from '../../../../core/src/errors/lookout-error.js';
import { TOOL_ERROR_META_KEY, toolFailure, toolOutcomeOf, toolSuccess } from '../../../../core/src/tools/tool-result.js';

describe('tool result encoding (the device writes it, the hub reads it, one module)', () => {
  it('reads back every JSON value the device wrote, with nothing added or taken off', () => {
    for (const value of [{ a: 1 }, { result: 3 }, [1, 2], 'words', 7, true, null, {}]) {
      assert.deepEqual(toolOutcomeOf(toolSuccess(value)), { status: 'ok', result: value }, JSON.stringify(value));
    }
    assert.deepEqual(toolOutcomeOf(toolSuccess(undefined)), { status: 'ok', result: null });
  });

  it('puts an object in structuredContent and any other JSON in the text alone', () => {
    assert.deepEqual(toolSuccess({ a: 1 }), { content: [{ type: 'text', text: '{"a":1}' }], structuredContent: { a: 1 } });
    assert.deepEqual(toolSuccess([1, 2]), { content: [{ type: 'text', text: '[1,2]' }] });
    assert.deepEqual(toolSuccess(null), { content: [{ type: 'text', text: 'null' }] });
  });

  it('adds the image block of a tool that declares one, which readers of the JSON do not see', () => {
    const decl = { imageContent: { dataField: 'jpeg_base64', mimeTypeField: 'mime' } };
    const value = { jpeg_base64: 'AAAA', mime: 'image/jpeg', width: 2 };
    const r = toolSuccess(value, decl);
    assert.deepEqual(r.content[1], { type: 'image', data: 'AAAA', mimeType: 'image/jpeg' });
    assert.deepEqual(toolOutcomeOf(r), { status: 'ok', result: value });
  });

  it('reads a foreign server’s prose as text', () => {
    assert.deepEqual(toolOutcomeOf({ content: [{ type: 'text', text: 'plain words' }] }), { status: 'ok', result: 'plain words' });
  });

  it('reads a failure back with its message and code, the code under the one marker', () => {
    const r = toolFailure(new LookoutError('forbidden', 'not today'));
    assert.deepEqual((r._meta?.[TOOL_ERROR_META_KEY] as { code: string }).code, 'forbidden');
    assert.deepEqual(toolOutcomeOf(r), { status: 'error', error: 'not today', code: 'forbidden' });
    assert.deepEqual(toolOutcomeOf({ content: [], isError: true }), { status: 'error', error: 'the tool failed without a message' });
  });
});

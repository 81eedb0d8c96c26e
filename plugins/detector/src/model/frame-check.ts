import { LookoutError } from 'lookout/core';
import type { Frame } from '../../../camera/src/service.js';

/** A frame a back-end can preprocess: packed BGR888 of the size it says. */
export function checkFrame(frame: Frame): void {
  const expected = frame.width * frame.height * 3;
  if (frame.format !== 'bgr888' || !(frame.width > 0 && frame.height > 0) || frame.data.length !== expected) {
    throw new LookoutError(
      'message_invalid',
      `frame ${frame.index} is not packed BGR888 of its size (${frame.format} ${frame.width}x${frame.height}, ` +
        `${frame.data.length} bytes, expected ${expected})`,
    );
  }
}

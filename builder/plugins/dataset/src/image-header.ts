import { crc32 } from 'node:zlib';

export type ImageCheck = { ok: true; format: 'png' | 'jpeg'; width: number; height: number } | { ok: false; problem: 'empty' | 'corrupt'; why: string };

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * An image's size and whether the file is whole, read from its structure without decoding pixels
 * (an import reads hundreds of thousands of frames): PNG chunks with their CRCs up to IEND, JPEG
 * segments up to the frame header and the end-of-image marker. A truncated or garbled file is
 * corrupt; a zero-byte one is empty.
 */
export function checkImage(bytes: Buffer): ImageCheck {
  if (bytes.length === 0) return { ok: false, problem: 'empty', why: 'the file has no bytes' };
  if (bytes.subarray(0, 8).equals(PNG_SIGNATURE)) return checkPng(bytes);
  if (bytes[0] === 0xff && bytes[1] === 0xd8) return checkJpeg(bytes);
  return { ok: false, problem: 'corrupt', why: 'neither a PNG nor a JPEG' };
}

function corrupt(why: string): ImageCheck {
  return { ok: false, problem: 'corrupt', why };
}

function checkPng(bytes: Buffer): ImageCheck {
  let at = 8;
  let size: { width: number; height: number } | undefined;
  while (at + 12 <= bytes.length) {
    const length = bytes.readUInt32BE(at);
    const type = bytes.toString('latin1', at + 4, at + 8);
    const end = at + 12 + length;
    if (end > bytes.length) return corrupt(`PNG chunk ${type} runs past the end of the file (truncated)`);
    if (crc32(bytes.subarray(at + 4, at + 8 + length)) !== bytes.readUInt32BE(at + 8 + length)) return corrupt(`PNG chunk ${type} fails its CRC`);
    if (type === 'IHDR') size = { width: bytes.readUInt32BE(at + 8), height: bytes.readUInt32BE(at + 12) };
    if (type === 'IEND') {
      if (!size || size.width === 0 || size.height === 0) return corrupt('PNG without a valid IHDR');
      return { ok: true, format: 'png', ...size };
    }
    at = end;
  }
  return corrupt('PNG without IEND (truncated)');
}

/** Start-of-frame markers (baseline, progressive, lossless…): C0-CF but C4 (DHT), C8 (JPG) and CC (DAC). */
const isSof = (m: number) => m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc;

function checkJpeg(bytes: Buffer): ImageCheck {
  let at = 2;
  let size: { width: number; height: number } | undefined;
  while (at + 4 <= bytes.length) {
    if (bytes[at] !== 0xff) return corrupt(`JPEG marker expected at byte ${at}`);
    const marker = bytes[at + 1];
    if (marker === 0xff) {
      at++;
      continue;
    }
    const length = bytes.readUInt16BE(at + 2);
    if (at + 2 + length > bytes.length) return corrupt('JPEG segment runs past the end of the file (truncated)');
    if (isSof(marker)) size = { height: bytes.readUInt16BE(at + 5), width: bytes.readUInt16BE(at + 7) };
    if (marker === 0xda) break; // start of scan: entropy-coded data follows up to EOI
    at += 2 + length;
  }
  if (!size || size.width === 0 || size.height === 0) return corrupt('JPEG without a frame header');
  // Some encoders pad after EOI; it must be among the last bytes.
  const tail = bytes.subarray(Math.max(0, bytes.length - 64));
  for (let i = tail.length - 2; i >= 0; i--) if (tail[i] === 0xff && tail[i + 1] === 0xd9) return { ok: true, format: 'jpeg', ...size };
  return corrupt('JPEG without its end-of-image marker (truncated)');
}

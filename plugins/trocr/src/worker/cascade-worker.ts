/**
 * The cascade's worker thread: opens the encoder and decoder, then crops and reads what the main
 * thread sends, one request at a time. It keeps the onnxruntime sessions off the thread that runs
 * the detector (onnxruntime-node's run is synchronous on its caller's thread).
 */
import { readFile } from 'node:fs/promises';
import { parentPort } from 'node:worker_threads';
import { CropResizer } from 'lookout/native';
import { toLookoutError } from 'lookout/core';
import { TextRecognizer } from '../model/text-recognizer.js';
import { TROCR } from '../model/trocr-contract.js';
import type { OpenRequest, ReadRequest, WorkerError, WorkerReply, WorkerRequest } from './worker-protocol.js';

const port = parentPort;
if (!port) throw new Error('cascade-worker runs as a worker thread');

let recognizer: TextRecognizer | undefined;
let cropper: CropResizer | undefined;

function reply(message: WorkerReply): void {
  port!.postMessage(message);
}

function asWorkerError(err: unknown): WorkerError {
  const e = toLookoutError(err);
  const mismatches = (e.details as { mismatches?: unknown } | undefined)?.mismatches;
  return { code: e.code, message: e.message, ...(Array.isArray(mismatches) ? { mismatches: mismatches.map(String) } : {}) };
}

async function open(request: OpenRequest): Promise<void> {
  const [encoder, decoder] = await Promise.all([readFile(request.encoderPath), readFile(request.decoderPath)]);
  recognizer = await TextRecognizer.open(encoder, decoder, { encoderName: request.encoderPath, decoderName: request.decoderPath, threads: request.threads });
  cropper = new CropResizer({ size: TROCR.CROP_SIZE });
  reply({ kind: 'opened', vocabSize: recognizer.vocabSize, cropKernel: cropper.implementation });
}

async function read(request: ReadRequest): Promise<void> {
  if (!recognizer || !cropper) throw new Error('the cascade worker was asked to read before it opened its models');
  const per = 3 * TROCR.CROP_SIZE * TROCR.CROP_SIZE;
  const { tensor, rects } = cropper.run(request.frame, request.boxes);
  const reads = [];
  for (let i = 0; i < rects.length; i++) {
    const text = await recognizer.read(tensor.subarray(i * per, (i + 1) * per));
    const r = rects[i];
    reads.push({
      tokens: text.tokens,
      stop: text.stop,
      confidence: text.confidence,
      steps: text.steps,
      encoderMs: text.encoderMs,
      decoderMs: text.decoderMs,
      rect: [r.x, r.y, r.width, r.height] as [number, number, number, number],
    });
  }
  reply({ kind: 'read', job: request.job, reads });
}

// One request at a time: the main thread sends the next read only after this one's answer.
let queue: Promise<void> = Promise.resolve();
port.on('message', (request: WorkerRequest) => {
  queue = queue.then(async () => {
    if (request.kind === 'close') {
      await recognizer?.close();
      recognizer = undefined;
      reply({ kind: 'closed' });
      return;
    }
    try {
      await (request.kind === 'open' ? open(request) : read(request));
    } catch (err) {
      reply({ kind: 'failed', ...(request.kind === 'read' ? { job: request.job } : {}), error: asWorkerError(err) });
    }
  });
});

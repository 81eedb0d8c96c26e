import { Transform } from 'node:stream';

/** Passes at most `limit` bytes; past it, the stream fails (the client sees a cut answer, the hub no unbounded relay). */
export function boundedStream(limit: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen > limit) done(new Error(`the builder's answer passed ${limit} bytes`));
      else done(null, chunk);
    },
  });
}

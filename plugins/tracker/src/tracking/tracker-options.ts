import { z } from 'zod';
import { LookoutError } from 'lookout/core';

const unit = z.number().min(0).max(1);

/**
 * Tuning of {@link ByteTracker}. Defaults follow ByteTrack's published settings (a track is confirmed
 * by its second hit); lostPenalty is ours and was chosen on the tracking bench.
 */
export const ByteTrackerOptionsSchema = z
  .object({
    /** Detections at or above this confidence take part in the first association and may start tracks. */
    highThreshold: unit.default(0.5),
    /** Detections below this are ignored; between low and high they only keep existing tracks alive. */
    lowThreshold: unit.default(0.1),
    /** A new track starts only from an unmatched detection at least this confident. */
    birthThreshold: unit.default(0.6),
    /** Minimum IoU for the first association (high detections against active and lost tracks). */
    firstMatchIou: unit.default(0.2),
    /** Minimum IoU for the second association (low detections against still unmatched active tracks). */
    secondMatchIou: unit.default(0.5),
    /** Minimum IoU for a tentative track to take a remaining high detection. */
    tentativeMatchIou: unit.default(0.3),
    /** Consecutive hits a tentative track needs to be confirmed (and get an id). */
    minHits: z.number().int().min(1).default(2),
    /** Frames a confirmed track survives without a detection before it is dropped. */
    lostBufferFrames: z.number().int().min(0).default(30),
    /**
     * Added to the 1 - IoU cost of a lost track in the first association: where a detection fits a
     * track seen last frame and one that has been missing about as well (two people at the moment
     * they cross), the one seen last frame takes it. 0 is plain ByteTrack.
     */
    lostPenalty: z.number().min(0).max(1).default(0.1),
    /** Boxes smaller than this (pixels, each way) are grown to it before IoU matching; 0 turns it off. */
    minMatchSize: z.number().min(0).default(16),
    /** A track only matches detections of its own class. */
    classAware: z.boolean().default(true),
    /** Kalman process/measurement noise as fractions of the box size per frame. */
    positionNoise: z
      .number()
      .positive()
      .default(1 / 20),
    velocityNoise: z
      .number()
      .positive()
      .default(1 / 160),
  })
  .strict()
  .refine((o) => o.lowThreshold <= o.highThreshold, { message: 'lowThreshold must not exceed highThreshold', path: ['lowThreshold'] })
  .refine((o) => o.birthThreshold >= o.highThreshold, { message: 'birthThreshold must be at least highThreshold', path: ['birthThreshold'] });

export type ByteTrackerOptions = z.output<typeof ByteTrackerOptionsSchema>;
export type ByteTrackerOptionsInput = z.input<typeof ByteTrackerOptionsSchema>;

export function parseByteTrackerOptions(input: ByteTrackerOptionsInput = {}): ByteTrackerOptions {
  const parsed = ByteTrackerOptionsSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = issue.path.join('.') || '(options)';
    throw new LookoutError('config_invalid', `tracker option ${key}: ${issue.message}`, { details: parsed.error.issues });
  }
  return parsed.data;
}

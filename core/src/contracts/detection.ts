import { z } from 'zod';

/**
 * One detection (spec 01, "Detection"). `b` is [x1, y1, x2, y2, …] in pixels of the frame the
 * detector saw (the 640×640 substream, or the dets message's frame_width × frame_height); more
 * numbers may follow and readers ignore them (DESIGN.md). boxOnPicture (detection-frame.ts) puts it on a picture.
 */
export const DetectionSchema = z
  .looseObject({
    c: z.number().int().nonnegative().describe('class id; 0 is person in the production class map'),
    p: z.number().min(0).max(1).describe('confidence'),
    b: z.array(z.number()).min(4).describe('[x1, y1, x2, y2, …] in pixels of the detector frame'),
    track_id: z.number().int().optional().describe('present when the tracker layer is enabled'),
    x: z.number().optional().describe('spatial fusion, metres right of the optical axis (depth layer)'),
    y: z.number().optional().describe('spatial fusion, metres below the optical axis (depth layer)'),
    z: z.number().optional().describe('spatial fusion, metres along the optical axis (depth layer)'),
  })
  .describe('One detection (spec 01 "Detection")');
/** A detection as parsed (see DetectionSchema). */
export type Detection = z.infer<typeof DetectionSchema>;

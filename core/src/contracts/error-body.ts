import { z } from 'zod';

/** Every failure the hub answers (DESIGN.md): `{ error: { code, message, details? } }`. */
export const ErrorBodySchema = z
  .looseObject({
    error: z.looseObject({
      code: z.string().regex(/^(?:[a-z][a-z0-9-]*\.)?[a-z][a-z0-9_]*$/, 'a lower snake_case code, or <plugin>.<code> for a plugin’s own'),
      message: z.string().min(1),
      details: z.unknown().optional(),
    }),
  })
  .describe('error body of the hub');
/** An error body as parsed (see ErrorBodySchema). */
export type ErrorBodyShape = z.infer<typeof ErrorBodySchema>;

import { LookoutError } from 'lookout/core';

/** [1, 3, H, W] NCHW. */
export type InputShape = [number, number, number, number];

/** The three sizes recipes use: 544 custom compile, 640 production, 672 Omni. */
export const KNOWN_INPUT_SIZES = { custom: 544, production: 640, omni: 672 } as const;
export const DEFAULT_INPUT_SIZE = KNOWN_INPUT_SIZES.production;

export function squareShape(size: number): InputShape {
  return [1, 3, size, size];
}

export function formatShape(shape: ReadonlyArray<number | string> | null): string {
  return shape ? `[${shape.join(',')}]` : 'unknown';
}

export interface ShapeSources {
  /** What the package's labels.json declares; null for a bare model with no labels.json. */
  declared: InputShape | null;
  /** The model file's real input shape; null where it cannot be read here (.dlc without the vendor SDK). */
  model: ReadonlyArray<number | string> | null;
  /** What preprocessing produces. */
  target: InputShape;
  modelName: string;
}

/**
 * Fail closed: a shape disagreement means silent accuracy loss on the device (spec 02), so any
 * difference refuses the package, naming all three shapes. A symbolic batch dimension is accepted;
 * symbolic H or W is not, since exports are fixed 1x3xHxW.
 */
export function checkInputShapes(s: ShapeSources): void {
  const problems: string[] = [];
  const model = s.model;
  if (model) {
    if (model.length !== 4) problems.push(`the model input has rank ${model.length}, not 4`);
    else {
      if (!(model[0] === 1 || typeof model[0] === 'string')) problems.push(`the model batch is ${model[0]}, not 1`);
      if (model[1] !== 3) problems.push(`the model takes ${model[1]} channels, not 3 (NCHW)`);
      if (typeof model[2] !== 'number' || typeof model[3] !== 'number') problems.push('the model input H and W are not fixed');
      else if (model[2] !== s.target[2] || model[3] !== s.target[3]) problems.push('the model file and preprocessing disagree');
    }
  }
  if (s.declared && (s.declared[2] !== s.target[2] || s.declared[3] !== s.target[3])) {
    problems.push('the package declaration and preprocessing disagree');
  }
  if (s.declared && model && model.length === 4 && (model[2] !== s.declared[2] || model[3] !== s.declared[3])) {
    problems.push('the package declaration and the model file disagree');
  }
  if (problems.length === 0) return;
  const shapes = {
    declared: s.declared ? formatShape(s.declared) : 'none (no labels.json)',
    model: s.model ? formatShape(s.model) : 'unknown (not readable here)',
    preprocessing: formatShape(s.target),
  };
  throw new LookoutError(
    'model_shape_mismatch',
    `input shapes disagree for ${s.modelName}: package declares ${shapes.declared}, model file takes ${shapes.model}, ` +
      `preprocessing targets ${shapes.preprocessing} (${problems.join('; ')}). Export, compile and runtime ` +
      `must use one size: ${KNOWN_INPUT_SIZES.custom} custom compile, ${KNOWN_INPUT_SIZES.production} production, ` +
      `${KNOWN_INPUT_SIZES.omni} Omni recipes`,
    { details: shapes },
  );
}

/**
 * The preprocessing target: the configured size if any, else what the package declares, else what
 * the model file takes, else the production 640.
 */
export function resolveTargetShape(inputSize: number | undefined, declared: InputShape | null, model: ReadonlyArray<number | string> | null): InputShape {
  if (inputSize !== undefined) {
    if (!Number.isInteger(inputSize) || inputSize <= 0) {
      throw new LookoutError('config_invalid', `preprocessing input size must be a positive integer (got ${inputSize})`);
    }
    return squareShape(inputSize);
  }
  if (declared) return [...declared];
  if (model && model.length === 4 && typeof model[2] === 'number' && typeof model[3] === 'number') {
    return [1, 3, model[2], model[3]];
  }
  return squareShape(DEFAULT_INPUT_SIZE);
}

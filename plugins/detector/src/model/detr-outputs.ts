/**
 * Which model outputs are the boxes and the logits. RF-DETR's own export names them `dets` (boxes
 * [1, Q, 4]) and `labels` (logits [1, Q, C]); other DETR exports use pred_boxes/pred_logits or
 * boxes/logits. Names are tried first, then shapes (the one rank-3 output ending in 4 is the boxes).
 */
export const BOX_OUTPUT_NAMES = ['dets', 'pred_boxes', 'boxes'] as const;
export const LOGIT_OUTPUT_NAMES = ['labels', 'pred_logits', 'logits'] as const;

export interface OutputShape {
  name: string;
  /** Dimensions; strings are symbolic (unknown until run). */
  dims: ReadonlyArray<number | string>;
}

export interface DetrOutputNames {
  boxes: string;
  logits: string;
}

export function findDetrOutputs(outputs: readonly OutputShape[]): DetrOutputNames {
  const byName = (names: readonly string[]) => names.map((n) => outputs.find((o) => o.name === n)).find((o) => o !== undefined);
  let boxes = byName(BOX_OUTPUT_NAMES);
  let logits = byName(LOGIT_OUTPUT_NAMES);
  const rank3 = outputs.filter((o) => o.dims.length === 3);
  if (boxes && !logits) {
    const others = rank3.filter((o) => o !== boxes);
    if (others.length === 1) logits = others[0];
  } else if (logits && !boxes) {
    const others = rank3.filter((o) => o !== logits);
    if (others.length === 1) boxes = others[0];
  } else if (!boxes && !logits && rank3.length === 2) {
    // Without names only the last dimension tells them apart, which fails for a 4-class head.
    const fours = rank3.filter((o) => o.dims[2] === 4);
    if (fours.length === 1) {
      boxes = fours[0];
      logits = rank3.find((o) => o !== boxes);
    }
  }
  if (!boxes || !logits || boxes === logits) {
    const seen = outputs.map((o) => `${o.name} [${o.dims.join(',')}]`).join(', ');
    throw new Error(
      `cannot tell boxes [1,Q,4] and logits [1,Q,C] apart among the model outputs (${seen}); ` +
        `expected names ${BOX_OUTPUT_NAMES.join('/')} and ${LOGIT_OUTPUT_NAMES.join('/')}`,
    );
  }
  return { boxes: boxes.name, logits: logits.name };
}

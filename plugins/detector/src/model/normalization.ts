/** RF-DETR normalizes RGB in 0..1 with the ImageNet statistics. */
export const IMAGENET_MEAN: readonly [number, number, number] = [0.485, 0.456, 0.406];
export const IMAGENET_STD: readonly [number, number, number] = [0.229, 0.224, 0.225];

export interface PreprocessOptions {
  /** Widen the filter when shrinking, as torchvision's bilinear resize does (default true). */
  antialias?: boolean;
  mean?: readonly [number, number, number];
  std?: readonly [number, number, number];
}

export interface SizePair {
  srcWidth: number;
  srcHeight: number;
  dstWidth: number;
  dstHeight: number;
}

/** `lookout/native`: the native addon's loader and the TypeScript twin of each kernel (tests hold them equal; the C++ is in native/src). */
export { loadNativeAddon, nativeAddon, nativeStatus, nativeDir, NATIVE_ABI_VERSION } from './native-addon.js';
export type { KernelImplementation, NativeLoad, NativeStatus } from './native-addon.js';
export type { NativeAddon, NativeResampler, NativeDetrDecoder } from './native-kernels.js';
export { computeResizeTaps, quantizeResizeTaps, type ResizeTaps } from './resize-taps.js';
export { NchwResampleTwin } from './nchw-resample-twin.js';
export { BgrResampleTwin } from './bgr-resample-twin.js';
export { BgrResizer } from './bgr-resizer.js';
export { resampleReference, bgrResampleReference, resizeWindow } from './resample-reference.js';
export { CropResizer, TEXT_CROP_SIZE, type CropBox, type CropResizerOptions, type Crops } from './crop-resizer.js';
export { rectInside, type PixelRect, type BgrImage } from './pixel-rect.js';

export { AnnexBSplitter, AccessUnitAssembler, accessUnitsOf, countPictures, nalType, isIrap, isVcl, HEVC_NAL, type AccessUnit } from './hevc-annexb.js';
export { runFfmpeg, type FfmpegRun } from './ffmpeg-process.js';
export { jpegFromHevc, mjpegQscale, type JpegOptions } from './jpeg-from-hevc.js';

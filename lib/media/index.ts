export { nextStartCode, endWithoutZeros, forEachNal, nalUnitsOf } from './annexb-scan.js';
export { AnnexBSplitter, AccessUnitAssembler, accessUnitsOf, nalType, isIrap, isVcl, HEVC_NAL, type AccessUnit } from './hevc-annexb.js';
export { countPictures, countPicturesTwin, countPicturesWith, MAX_NAL_BYTES, type PictureCount } from './annexb-count.js';
export { HEVC_RULES, H264_RULES, nalRulesOf, type AnnexBCodec, type NalRules } from './nal-rules.js';
export { runFfmpeg, type FfmpegRun } from './ffmpeg-process.js';
export { jpegFromHevc, mjpegQscale, type JpegOptions } from './jpeg-from-hevc.js';

/**
 * Builder stage 4, compile to DLC: `POST /api/pipeline/compile` checks the export's input shape
 * against the compile target and submits the vendor compile (qnn_dlc, graph rf_detr_qcs8550). A
 * COMPILE_COMPLETE job's result: `{ dlc_path, graph_name, target_runtime, input_shape, onnx_path, sha256, bytes }`.
 */
export interface CompileResult {
  dlc_path: string;
  graph_name: string;
  target_runtime: 'qnn_dlc';
  input_shape: (number | string)[];
  onnx_path: string;
  sha256: string;
  bytes: number;
}

/** The graph names of spec 02: the detector, and TrOCR's two parts (compiled as two jobs, never fused). */
export const GRAPH_NAMES = { rf_detr: 'rf_detr_qcs8550', trocr_encoder: 'trocr_encoder_qcs8550', trocr_decoder: 'trocr_decoder_qcs8550' } as const;

import type { protos } from '@google-cloud/aiplatform';
import { LookoutError } from 'lookout/core';

type CustomJob = protos.google.cloud.aiplatform.v1.ICustomJob;
type AcceleratorType = keyof typeof protos.google.cloud.aiplatform.v1.AcceleratorType;

/**
 * The Vertex AI custom job the `vertex` executor submits through Google's client
 * (`JobServiceClient.createCustomJob` under `projects/{project}/locations/{location}`): one worker
 * pool whose machine type and accelerator follow gpu_type, the training image with the recipe's
 * arguments, the dataset URI, and an output folder under the configured bucket.
 */

/** gpu_type → the machine Vertex pairs it with (one accelerator). */
export const VERTEX_MACHINES: Readonly<Partial<Record<AcceleratorType, string>>> = {
  NVIDIA_TESLA_T4: 'n1-standard-8',
  NVIDIA_TESLA_V100: 'n1-standard-8',
  NVIDIA_TESLA_P100: 'n1-standard-8',
  NVIDIA_L4: 'g2-standard-8',
  NVIDIA_TESLA_A100: 'a2-highgpu-1g',
  NVIDIA_A100_80GB: 'a2-ultragpu-1g',
  NVIDIA_H100_80GB: 'a3-highgpu-1g',
};

export interface VertexSettings {
  project: string;
  location: string;
  image: string;
  /** gs:// folder the jobs write under (baseOutputDirectory). */
  outputUri: string;
  timeLimitS: number;
}

export interface VertexJobInput {
  jobId: string;
  recipe: string;
  gpuType: string;
  datasetUri: string;
  epochs: number;
  batchSize: number;
  inputSize: number;
  classes: string[];
}

export function vertexParent(s: VertexSettings): string {
  return `projects/${s.project}/locations/${s.location}`;
}

export function vertexOutputUri(s: VertexSettings, jobId: string): string {
  return `${s.outputUri.replace(/\/+$/, '')}/${jobId}`;
}

export function vertexCustomJob(s: VertexSettings, j: VertexJobInput): CustomJob {
  // Own keys only: a gpu_type such as "constructor" is not a machine.
  const machineType = Object.hasOwn(VERTEX_MACHINES, j.gpuType) ? VERTEX_MACHINES[j.gpuType as AcceleratorType] : undefined;
  if (!machineType) {
    throw new LookoutError(
      'training.gpu_type_unknown',
      `gpu_type ${j.gpuType} is not one Vertex AI offers here; one of ${Object.keys(VERTEX_MACHINES).join(', ')}`,
      {
        details: { gpu_type: j.gpuType, known: Object.keys(VERTEX_MACHINES) },
      },
    );
  }
  const output = vertexOutputUri(s, j.jobId);
  return {
    displayName: `lookout-train-${j.jobId}`,
    labels: { 'lookout-job': j.jobId, 'lookout-recipe': j.recipe.replace(/[^a-z0-9_-]/g, '-') },
    jobSpec: {
      workerPoolSpecs: [
        {
          machineSpec: { machineType, acceleratorType: j.gpuType as AcceleratorType, acceleratorCount: 1 },
          replicaCount: 1,
          diskSpec: { bootDiskType: 'pd-ssd', bootDiskSizeGb: 100 },
          containerSpec: {
            imageUri: s.image,
            args: [
              '--recipe',
              j.recipe,
              '--dataset',
              j.datasetUri,
              '--epochs',
              String(j.epochs),
              '--batch-size',
              String(j.batchSize),
              '--input-size',
              String(j.inputSize),
              '--classes',
              j.classes.join(','),
            ],
            env: [{ name: 'LOOKOUT_JOB_ID', value: j.jobId }],
          },
        },
      ],
      baseOutputDirectory: { outputUriPrefix: output },
      scheduling: { timeout: { seconds: s.timeLimitS } },
    },
  };
}

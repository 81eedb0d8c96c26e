import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LookoutError } from 'lookout/core';

export interface VendorCompileRequest {
  onnxPath: string;
  graphName: string;
  inputName: string;
  inputShape: (number | string)[];
  outDir: string;
  signal: AbortSignal;
}

/**
 * The vendor compile, over HTTP: the ONNX as the body of `POST {url}/v1/compile`, the options in the
 * `x-compile-options` header (target qnn_dlc, the graph name, `context_enable_graphs=<graph>`, the
 * input spec), the operator's COMPILE_SERVICE_TOKEN as `Authorization: Token …`; the answer is the
 * DLC. The token appears in no log, job, answer or error (any echo of it is masked).
 */
export class VendorCompile {
  constructor(private readonly o: { url: string; token: string; timeoutMs: number; maxDlcBytes: number }) {}

  options(r: Pick<VendorCompileRequest, 'graphName' | 'inputName' | 'inputShape'>): Record<string, unknown> {
    return {
      target_runtime: 'qnn_dlc',
      device: 'QCS8550 (Proxy)',
      graph_name: r.graphName,
      compile_options: `--target_runtime qnn_dlc --qnn_graph_name ${r.graphName} --qnn_options context_enable_graphs=${r.graphName}`,
      input_specs: { [r.inputName]: r.inputShape },
    };
  }

  async compile(r: VendorCompileRequest): Promise<{ dlc_path: string; sha256: string; bytes: number }> {
    const url = `${this.o.url.replace(/\/+$/, '')}/v1/compile`;
    const origin = new URL(url).origin;
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: { authorization: `Token ${this.o.token}`, 'content-type': 'application/octet-stream', 'x-compile-options': JSON.stringify(this.options(r)) },
        body: await readFile(r.onnxPath),
        signal: AbortSignal.any([r.signal, AbortSignal.timeout(this.o.timeoutMs)]),
      });
    } catch (err) {
      if (r.signal.aborted) throw r.signal.reason as Error;
      const cause = (err as { cause?: { code?: string } }).cause;
      const why = (err as Error).name === 'TimeoutError' ? `no answer in ${this.o.timeoutMs} ms` : (cause?.code ?? (err as Error).message);
      throw new LookoutError('compile.service_unreachable', `the compile service at ${origin} is not reachable from this builder (${this.mask(why)})`, {
        details: { service: origin },
      });
    }
    if (!res.ok) {
      const text = this.mask((await res.text()).slice(0, 300));
      throw new LookoutError('compile.service_failed', `the compile service answered ${res.status}: ${text}`, { details: { status: res.status } });
    }
    const declared = Number(res.headers.get('content-length') ?? 0);
    if (declared > this.o.maxDlcBytes)
      throw new LookoutError('compile.service_failed', `the compile service's DLC is ${declared} bytes, over the ${this.o.maxDlcBytes} the builder keeps`);
    const dlc = Buffer.from(await res.arrayBuffer());
    if (dlc.length === 0 || dlc.length > this.o.maxDlcBytes)
      throw new LookoutError('compile.service_failed', `the compile service answered a DLC of ${dlc.length} bytes`);
    await mkdir(r.outDir, { recursive: true });
    const dlcPath = join(r.outDir, `${r.graphName}.dlc`);
    await writeFile(dlcPath, dlc);
    return { dlc_path: dlcPath, sha256: createHash('sha256').update(dlc).digest('hex'), bytes: dlc.length };
  }

  /** The token never leaves in text, even where a service echoes it. */
  mask(text: string): string {
    return this.o.token ? text.split(this.o.token).join('***') : text;
  }
}

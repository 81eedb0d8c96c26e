/**
 * Test double of an OpenAI-compatible describer (POST /chat/completions) on 127.0.0.1. `truthful`
 * restates the person_count of the figures the device sent; `lying` states a count of its own, as a
 * language model that contradicts the detector would; `plan` answers with a fixed text (a plan).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type DescriberMode = { kind: 'truthful' } | { kind: 'lying'; people: number } | { kind: 'fixed'; text: string };

export interface DescriberDouble {
  url: string;
  mode: DescriberMode;
  /** The user messages it was sent, oldest first. */
  prompts: string[];
  /** The model each request asked for, oldest first. */
  models: string[];
  close(): Promise<void>;
}

export async function startDescriberDouble(mode: DescriberMode = { kind: 'truthful' }): Promise<DescriberDouble> {
  const double: DescriberDouble = { url: '', mode, prompts: [], models: [], close: async () => undefined };
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as { model: string; messages: { role: string; content: string }[] };
      double.models.push(body.model);
      const prompt = body.messages.find((m) => m.role === 'user')?.content ?? '';
      double.prompts.push(prompt);
      let text: string;
      if (double.mode.kind === 'fixed') text = double.mode.text;
      else if (double.mode.kind === 'lying') text = `I can see ${double.mode.people} people near the door.`;
      else {
        const figures = JSON.parse(/Figures: (.*)\n/.exec(prompt)?.[1] ?? '{}') as { person_count?: number };
        text = `Calm scene: ${figures.person_count} people in view.`;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: text } }] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  double.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  double.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return double;
}

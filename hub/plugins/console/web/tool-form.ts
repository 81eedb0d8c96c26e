import { Validator, type Schema } from '@cfworker/json-schema';
import { html } from 'htm/preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { getJson, postJson, q } from './api.js';

interface ListedTool {
  name: string;
  description?: string;
  inputSchema: { type: 'object'; properties?: Record<string, JsonSchema>; required?: string[] };
  annotations?: { readOnlyHint?: boolean; idempotentHint?: boolean };
}

interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  description?: string;
  default?: unknown;
}

type FieldKind = 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'json';

function kindOf(s: JsonSchema): FieldKind {
  if (Array.isArray(s.enum) && s.enum.every((v) => typeof v === 'string')) return 'enum';
  const t = Array.isArray(s.type) ? s.type.find((x) => x !== 'null') : s.type;
  return t === 'string' || t === 'number' || t === 'integer' || t === 'boolean' ? t : 'json';
}

/** The arguments object from the fields' texts: numbers and JSON parsed, empty optional fields left out. */
function argumentsOf(tool: ListedTool, values: Record<string, string>): { args: Record<string, unknown>; errors: string[] } {
  const args: Record<string, unknown> = {};
  const errors: string[] = [];
  for (const [name, schema] of Object.entries(tool.inputSchema.properties ?? {})) {
    const text = values[name] ?? '';
    const kind = kindOf(schema);
    if (text === '' && kind !== 'boolean') continue;
    if (kind === 'boolean') {
      if (text !== '') args[name] = text === 'true';
    } else if (kind === 'number' || kind === 'integer') {
      const n = Number(text);
      if (text.trim() === '' || !Number.isFinite(n)) errors.push(`${name}: not a number`);
      else args[name] = n;
    } else if (kind === 'json') {
      try {
        args[name] = JSON.parse(text);
      } catch {
        errors.push(`${name}: not JSON`);
      }
    } else args[name] = text;
  }
  return { args, errors };
}

/** Checks the arguments against the tool's own input JSON Schema (2020-12, as the devices publish it) before the call. */
function schemaErrors(tool: ListedTool, args: Record<string, unknown>): string[] {
  const result = new Validator(tool.inputSchema as Schema, '2020-12', false).validate(args);
  if (result.valid) return [];
  // The deepest messages say what is wrong; the "failed … keyword" wrappers repeat them.
  const errors = result.errors.filter((e) => !/^Property .* does not match schema\.$|^Instance does not match "properties"/.test(e.error));
  return [...new Set((errors.length ? errors : result.errors).map((e) => `${e.instanceLocation.replace(/^#\/?/, '') || 'arguments'}: ${e.error}`))];
}

/** A form for a device tool: fields from its input schema, checked against it, the call's result shown. */
export function ToolForm(props: { deviceId: string }) {
  const [tools, setTools] = useState<ListedTool[] | null>(null);
  const [listError, setListError] = useState<string | null>(null);
  const [selected, setSelected] = useState('');
  const [values, setValues] = useState<Record<string, string>>({});
  const [errors, setErrors] = useState<string[]>([]);
  const [result, setResult] = useState<{ status: string; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    getJson<{ tools: ListedTool[] }>(`/tools/list?target=${q(props.deviceId)}`).then(
      (r) => setTools([...r.tools].sort((a, b) => a.name.localeCompare(b.name))),
      (err: Error) => setListError(err.message),
    );
  }, [props.deviceId]);
  const tool = useMemo(() => tools?.find((t) => t.name === selected), [tools, selected]);
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!tool) return;
    const { args, errors: parse } = argumentsOf(tool, values);
    const all = parse.length ? parse : schemaErrors(tool, args);
    setErrors(all);
    setResult(null);
    if (all.length > 0) return;
    setBusy(true);
    try {
      const r = await postJson<{ status: string; result: unknown; error?: { code: string; message: string } }>(`/tools/call?target=${q(props.deviceId)}`, {
        tool: tool.name,
        arguments: args,
      });
      setResult({ status: r.status, text: JSON.stringify(r.status === 'ok' ? r.result : r.error, null, 2) });
    } catch (err) {
      setResult({ status: 'error', text: err instanceof Error ? err.message : String(err) });
    } finally {
      setBusy(false);
    }
  };
  const field = (name: string, schema: JsonSchema) => {
    const kind = kindOf(schema);
    const required = tool?.inputSchema.required?.includes(name) ?? false;
    const set = (v: string) => setValues((old) => ({ ...old, [name]: v }));
    const value = values[name] ?? '';
    const input =
      kind === 'enum'
        ? html`<select name=${name} value=${value} onChange=${(e: Event) => set((e.target as HTMLSelectElement).value)}>
            <option value="">—</option>
            ${(schema.enum as string[]).map((v) => html`<option value=${v}>${v}</option>`)}
          </select>`
        : kind === 'boolean'
          ? html`<select name=${name} value=${value} onChange=${(e: Event) => set((e.target as HTMLSelectElement).value)}>
              <option value="">—</option>
              <option value="true">true</option>
              <option value="false">false</option>
            </select>`
          : kind === 'json'
            ? html`<textarea
                name=${name}
                rows="3"
                placeholder="JSON"
                value=${value}
                onInput=${(e: Event) => set((e.target as HTMLTextAreaElement).value)}
              ></textarea>`
            : html`<input
                name=${name}
                type="text"
                inputmode=${kind === 'string' ? 'text' : 'decimal'}
                value=${value}
                onInput=${(e: Event) => set((e.target as HTMLInputElement).value)}
              />`;
    return html`<label class="field">
      <span>${name}${required ? ' *' : ''} <span class="muted small">${kind === 'json' ? 'JSON' : kind}</span></span>
      ${input} ${schema.description ? html`<span class="muted small">${schema.description}</span>` : null}
    </label>`;
  };
  return html`<section class="panel tool-form">
    <h2>Call a tool</h2>
    ${listError ? html`<p class="error">${listError}</p>` : null}
    <form onSubmit=${submit} data-testid="tool-form">
      <label class="field"
        ><span>Tool</span>
        <select
          name="tool"
          data-testid="tool-select"
          value=${selected}
          onChange=${(e: Event) => {
            setSelected((e.target as HTMLSelectElement).value);
            setValues({});
            setErrors([]);
            setResult(null);
          }}
        >
          <option value="">${tools === null ? 'loading…' : 'choose a tool'}</option>
          ${(tools ?? []).map((t) => html`<option value=${t.name}>${t.name}${t.annotations?.readOnlyHint ? '' : ' (changes state)'}</option>`)}
        </select>
      </label>
      ${tool ? html`<p class="muted small">${tool.description ?? ''}</p>` : null}
      ${tool ? Object.entries(tool.inputSchema.properties ?? {}).map(([n, s]) => field(n, s)) : null}
      ${
        errors.length
          ? html`<ul class="error" data-testid="tool-errors">
              ${errors.map((e) => html`<li>${e}</li>`)}
            </ul>`
          : null
      }
      <button type="submit" disabled=${!tool || busy} data-testid="tool-submit">${busy ? 'calling…' : 'Call'}</button>
    </form>
    ${result ? html`<pre class=${`result ${result.status === 'ok' ? '' : 'error'}`} data-testid="tool-result" data-status=${result.status}>${result.text}</pre>` : null}
  </section>`;
}

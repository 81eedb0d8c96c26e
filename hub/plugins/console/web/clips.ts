import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { blobUrl, getJson, q } from './api.js';
import { clock } from './format.js';

interface Chunk {
  device_id: string;
  name: string;
  started_at?: string;
  duration_s?: number;
  justified?: boolean;
  justified_reason?: string | null;
  playUrl: string;
}

/** Recent clips of the device (GET /fleet/playback-ready), justified ones marked, played in the page from the hub's H.264 mp4. */
export function Clips(props: { deviceId: string }) {
  const [chunks, setChunks] = useState<Chunk[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [playing, setPlaying] = useState<{ name: string; url: string } | null>(null);
  const [loading, setLoading] = useState<string | null>(null);
  const load = () =>
    getJson<{ recent_chunks: Chunk[] }>(`/fleet/playback-ready?shadow=${q(props.deviceId)}&limit=10`).then(
      (r) => {
        setChunks(r.recent_chunks.filter((c) => c.device_id === props.deviceId));
        setError(null);
      },
      (err: Error) => setError(err.message),
    );
  useEffect(() => {
    void load();
    const t = window.setInterval(() => void load(), 20_000);
    return () => clearInterval(t);
  }, [props.deviceId]);
  useEffect(() => () => playing && URL.revokeObjectURL(playing.url), [playing]);
  const play = async (c: Chunk) => {
    setLoading(c.name);
    try {
      // Fetched with the token (a <video src> cannot send it), played from memory.
      const url = await blobUrl(c.playUrl);
      setPlaying({ name: c.name, url });
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setLoading(null);
    }
  };
  return html`<section class="panel clips">
    <h2>Recent clips <button class="small" onClick=${() => void load()}>refresh</button></h2>
    ${error ? html`<p class="error">${error}</p>` : null}
    ${playing ? html`<video class="clip-player" data-testid="clip-player" src=${playing.url} controls autoplay muted playsinline></video>` : null}
    ${
      chunks === null
        ? html`<p class="muted">loading…</p>`
        : chunks.length === 0
          ? html`<p class="muted">No clip yet.</p>`
          : html`<ul class="clip-list">
              ${chunks.map(
                (c) =>
                  html`<li data-testid="clip" data-justified=${String(c.justified === true)}>
                    <button class="small" data-testid="play-clip" disabled=${loading === c.name} onClick=${() => void play(c)}>
                      ${loading === c.name ? '…' : '▶'}
                    </button>
                    <span>${clock(c.started_at ?? null)}</span>
                    <span class="muted small">${c.duration_s !== undefined ? `${Math.round(c.duration_s)} s` : ''}</span>
                    ${c.justified ? html`<span class="badge warn" title=${c.justified_reason ?? ''}>justified</span>` : null}
                    <span class="muted small name">${c.name}</span>
                  </li>`,
              )}
            </ul>`
    }
  </section>`;
}

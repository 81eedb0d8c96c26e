import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { canKeepForTab } from './token-store.js';

/** The hub asks a bearer token (lookout-hub --token): asked here, kept in memory (and, if chosen, encrypted for this tab). */
export function LoginView(props: { error: string | null; onSubmit(token: string, keep: boolean): void }) {
  const [token, setToken] = useState('');
  const [keep, setKeep] = useState(false);
  const keepable = canKeepForTab();
  return html`<main class="login">
    <form
      class="panel"
      data-testid="login-form"
      onSubmit=${(e: Event) => {
        e.preventDefault();
        if (token.trim()) props.onSubmit(token.trim(), keep && keepable);
      }}
    >
      <h1>Lookout</h1>
      <p>This hub asks for its access token (<code>lookout-hub --token</code>, <code>LOOKOUT_HUB_TOKEN</code>).</p>
      <label
        >Token
        <input
          type="password"
          name="token"
          autocomplete="current-password"
          value=${token}
          onInput=${(e: Event) => setToken((e.target as HTMLInputElement).value)}
          required
      /></label>
      ${
        keepable
          ? html`<label class="check"
              ><input type="checkbox" checked=${keep} onChange=${(e: Event) => setKeep((e.target as HTMLInputElement).checked)} /> Keep it for this tab
              (encrypted)</label
            >`
          : html`<p class="muted">Kept in memory only: a reload asks again.</p>`
      }
      ${props.error ? html`<p class="error" role="alert">${props.error}</p>` : null}
      <button type="submit">Sign in</button>
    </form>
  </main>`;
}

import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { getJson, HubError, onUnauthorized } from './api.js';
import { DebugView } from './debug-view.js';
import { DeviceView } from './device-view.js';
import { FleetView } from './fleet-view.js';
import { startLiveData } from './live-data.js';
import { LoginView } from './login-view.js';
import { ModelsView } from './models-view.js';
import { OpsView } from './ops-view.js';
import { setState, useStore } from './store.js';
import { forgetToken, restoreToken, setToken } from './token-store.js';

type Route = { view: 'fleet' } | { view: 'device'; id: string } | { view: 'debug' } | { view: 'models' } | { view: 'ops' };

function routeOf(hash: string): Route {
  const device = /^#\/device\/(.+)$/.exec(hash);
  if (device) return { view: 'device', id: decodeURIComponent(device[1]) };
  if (hash === '#/debug') return { view: 'debug' };
  if (hash === '#/models') return { view: 'models' };
  if (hash === '#/ops') return { view: 'ops' };
  return { view: 'fleet' };
}

function useRoute(): Route {
  const [route, setRoute] = useState(routeOf(location.hash));
  useEffect(() => {
    const on = () => setRoute(routeOf(location.hash));
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

/** Asks a route that needs the token: 200 means in (or no token needed), 401 means the page must ask for it. */
async function probe(): Promise<'ok' | 'needed'> {
  try {
    await getJson('/fleet/health');
    return 'ok';
  } catch (err) {
    if (err instanceof HubError && err.status === 401) return 'needed';
    return 'ok'; // another failure is shown where it happens
  }
}

function ConnectionBadge() {
  const s = useStore();
  const label = s.connection === 'live' ? 'live' : s.connection === 'connecting' ? 'connecting…' : 'disconnected: reconnecting…';
  return html`<span
    class=${`badge conn ${s.connection === 'live' ? 'ok' : 'bad'}`}
    data-testid="connection"
    data-state=${s.connection}
    title=${s.connectionDetail ?? ''}
    >${label}</span
  >`;
}

export function App() {
  const s = useStore();
  const route = useRoute();
  useEffect(() => {
    void (async () => {
      await restoreToken();
      setState({ auth: await probe() });
    })();
    return onUnauthorized(() => {
      forgetToken();
      setState({ auth: 'needed', authError: 'The hub asks for its token again.' });
    });
  }, []);
  useEffect(() => (s.auth === 'ok' ? startLiveData() : undefined), [s.auth]);

  if (s.auth === 'checking') return html`<main><p class="muted">Connecting to the hub…</p></main>`;
  if (s.auth === 'needed') {
    return html`<${LoginView}
      error=${s.authError}
      onSubmit=${async (token: string, keep: boolean) => {
        await setToken(token, keep);
        const result = await probe();
        if (result === 'needed') forgetToken();
        setState({ auth: result, authError: result === 'needed' ? 'The hub refused this token.' : null });
      }}
    />`;
  }
  return html`<div class="shell">
    <nav class="top">
      <a class="brand" href="#/">Lookout</a>
      <a href="#/" class=${route.view === 'fleet' ? 'active' : ''}>Fleet</a>
      <a href="#/models" class=${route.view === 'models' ? 'active' : ''}>Models</a>
      <a href="#/ops" class=${route.view === 'ops' ? 'active' : ''}>Operations</a>
      <a href="#/debug" class=${route.view === 'debug' ? 'active' : ''}>Debug</a>
      <span class="spacer"></span>
      <${ConnectionBadge} />
    </nav>
    ${
      route.view === 'device'
        ? html`<${DeviceView} key=${route.id} deviceId=${route.id} />`
        : route.view === 'debug'
          ? html`<${DebugView} />`
          : route.view === 'models'
            ? html`<${ModelsView} />`
            : route.view === 'ops'
              ? html`<${OpsView} />`
              : html`<${FleetView} />`
    }
  </div>`;
}

import { html } from 'htm/preact';
import { OPS_PANELS } from './ops-panels.js';

/**
 * The operations page: one section per fleet operation (remediation, provisioning, the transfer
 * queue). Each panel lives in its own file and is listed in ops-panels.ts, so that adding one is a
 * line there and nothing here.
 */
export function OpsView() {
  return html`<main class="ops">
    ${OPS_PANELS.map(
      ({ id, title, Panel }) =>
        html`<section key=${id} data-testid=${`ops-${id}`}>
          <h2>${title}</h2>
          <${Panel} />
        </section>`,
    )}
  </main>`;
}

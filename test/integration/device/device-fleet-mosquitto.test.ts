import { startMosquitto } from '../../support/mosquitto.js';
import { deviceFleetSuite } from './device-fleet-suite.js';

deviceFleetSuite('mosquitto', async () => {
  const broker = await startMosquitto();
  return { url: broker.url, restart: () => broker.restart(), stop: () => broker.stop() };
});

import { startMosquitto } from '../../support/mosquitto.js';
import { hubFleetSuite } from './hub-fleet-suite.js';

hubFleetSuite('mosquitto', async () => {
  const broker = await startMosquitto();
  return { url: broker.url, stop: () => broker.stop() };
});

import { EmbeddedBroker } from '../../../hub/src/broker/embedded-broker.js';
import { deviceFleetSuite, type FleetBroker } from './device-fleet-suite.js';

deviceFleetSuite('the embedded broker (aedes)', async () => {
  let broker = await EmbeddedBroker.start({ port: 0 });
  const port = broker.port;
  const handle: FleetBroker = {
    url: broker.url,
    async restart() {
      await broker.close();
      broker = await EmbeddedBroker.start({ port });
    },
    stop: () => broker.close(),
  };
  return handle;
});

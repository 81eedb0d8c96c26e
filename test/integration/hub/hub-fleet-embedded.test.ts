import { hubFleetSuite } from './hub-fleet-suite.js';

// The hub's own embedded broker (aedes): devices connect to it.
hubFleetSuite('the embedded broker', () => Promise.resolve({ stop: () => Promise.resolve() }));

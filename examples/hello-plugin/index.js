// An example third-party plugin. It imports only Lookout's public surface: `lookout/core` and a
// first-party plugin's published service (`lookout/plugins/die-temp`: its types and token), and uses
// nothing but `ctx`: no decorators, no internals. Load it by listing its path in an image:
//   { "name": "my-camera", "plugins": ["die-temp", "../examples/hello-plugin/index.js"] }
// `z` comes from the core too, so the plugin's schemas and the core's validation share one zod.
import { LookoutError, definePlugin, z } from 'lookout/core';
import { DieTemperatureToken } from 'lookout/plugins/die-temp';

export default definePlugin({
  name: 'hello',
  version: '1.0.0',
  core: '^1',
  description: 'Greets, and reports the die temperature it gets from the die-temp plugin',
  layer: 'layer0',
  requires: [DieTemperatureToken],
  config: z.object({ HELLO_GREETING: z.string().default('hello') }),
  topics: [{ suffix: 'events/hello', qos: 1, description: 'one greeting at start' }],
  // Its own error code: `hello.name_refused` on the wire, 400 through the hub, listed in its OpenAPI.
  errors: [{ code: 'name_refused', status: 400, description: 'the plugin does not greet that name' }],
  tools: [
    {
      name: 'say_hello',
      description: 'Greets someone and tells the current die temperature',
      input: z.object({ name: z.string().min(1).max(64).default('world') }),
    },
  ],
  async start(ctx) {
    const temperature = ctx.services.get(DieTemperatureToken);
    ctx.tools.register('say_hello', ({ name }) => {
      if (name.toLowerCase() === 'nobody') throw new LookoutError('hello.name_refused', 'nobody is not greeted');
      return { greeting: `${ctx.config.HELLO_GREETING}, ${name}`, device_id: ctx.runtime.id, die_temp_c: temperature.current() };
    });
    await ctx.bus.publish('events/hello', { type: 'hello', timestamp: new Date().toISOString(), greeting: ctx.config.HELLO_GREETING });
    ctx.log.info('hello plugin started');
  },
});

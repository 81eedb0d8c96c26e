import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mosquittoConf } from '../../../operator/src/mosquitto-conf.js';

const files = {
  aclFile: '/etc/mosquitto/lookout/acl',
  devicePasswordFile: '/etc/mosquitto/lookout/passwd',
  adminPasswordFile: '/etc/mosquitto/lookout/passwd-admin',
};
const listeners = (conf: string) => conf.split('\n').filter((l) => l.startsWith('listener '));

test('plain MQTT listens on the loopback only, devices and the hub/operator on listeners of their own', () => {
  const conf = mosquittoConf(files);
  assert.deepEqual(listeners(conf), ['listener 1883 127.0.0.1', 'listener 1884 127.0.0.1']);
  assert.match(conf, /^per_listener_settings true$/m);
  // Only the devices' listener binds the client id to the user name; two operator tools keep their own ids.
  const [devices, admin] = conf.split(/^listener /m).slice(1);
  assert.match(devices, /^use_username_as_clientid true$/m);
  assert.match(devices, /^password_file \/etc\/mosquitto\/lookout\/passwd$/m);
  assert.doesNotMatch(admin, /use_username_as_clientid/);
  assert.match(admin, /^password_file \/etc\/mosquitto\/lookout\/passwd-admin$/m);
  for (const section of [devices, admin]) assert.match(section, /^allow_anonymous false$/m);
});

test('with TLS files the listeners serve every interface, encrypted; a plain one leaves the loopback only when asked', () => {
  const tls = mosquittoConf({ ...files, tls: { certfile: '/c/broker.crt', keyfile: '/c/broker.key', cafile: '/c/ca.crt' } });
  assert.deepEqual(listeners(tls), ['listener 8883', 'listener 8884']);
  assert.equal(tls.match(/^certfile \/c\/broker\.crt$/gm)?.length, 2);
  assert.equal(tls.match(/^keyfile \/c\/broker\.key$/gm)?.length, 2);
  assert.deepEqual(listeners(mosquittoConf({ ...files, bind: '0.0.0.0', devicePort: 1990, adminPort: 1991 })), [
    'listener 1990 0.0.0.0',
    'listener 1991 0.0.0.0',
  ]);
  assert.throws(() => mosquittoConf({ ...files, bind: 'broker.lan' }), { code: 'config_invalid' });
  assert.throws(() => mosquittoConf({ ...files, devicePort: 1883, adminPort: 1883 }), { code: 'config_invalid' });
});

test('--require-certificate: the devices’ listener takes each device by its certificate’s CN, the hub’s keeps its passwords', () => {
  const conf = mosquittoConf({ ...files, tls: { certfile: '/c/broker.crt', keyfile: '/c/broker.key', cafile: '/c/ca.crt', requireCertificate: true } });
  const [devices, admin] = conf.split(/^listener /m).slice(1);
  assert.match(devices, /^require_certificate true$/m);
  assert.match(devices, /^use_identity_as_username true$/m);
  assert.match(devices, /^use_username_as_clientid true$/m);
  assert.match(devices, /^cafile \/c\/ca\.crt$/m);
  assert.doesNotMatch(devices, /password_file/);
  assert.doesNotMatch(admin, /require_certificate|use_identity_as_username/);
  assert.match(admin, /^password_file \/etc\/mosquitto\/lookout\/passwd-admin$/m);
  assert.throws(() => mosquittoConf({ ...files, tls: { certfile: '/c/b.crt', keyfile: '/c/b.key', requireCertificate: true } }), { code: 'config_invalid' });
});

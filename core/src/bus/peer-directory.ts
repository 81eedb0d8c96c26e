/** Every device's hello: what a device may read of the others (the bus ACL allows it, plugins subscribe to it). */
export const PEER_DIRECTORY_FILTER = 'devices/+/hello';

/** The ONVIF plugin's namespace table: discovery speaks the same vocabulary (one table, one set of prefixes). */
export { NS, declare, xmlEscape, type Prefix } from '../../onvif/src/service.js';

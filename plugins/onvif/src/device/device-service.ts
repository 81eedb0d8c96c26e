import type { Element } from '@xmldom/xmldom';
import { declare, NS, xmlEscape } from '../soap/namespaces.js';
import { descendants, text } from '../soap/soap-request.js';
import { faults, SoapFault } from '../soap/soap-fault.js';
import { baseUrl, PATHS, type OnvifSurface, type RequestInfo } from '../surface.js';
import { deviceSettings } from './device-settings.js';
import { networkInterfacesXml } from './network-interfaces.js';

const ns = declare('tds', 'tt');

function dateTime(el: string, d: Date): string {
  return (
    `<${el}><tt:Time><tt:Hour>${d.getUTCHours()}</tt:Hour><tt:Minute>${d.getUTCMinutes()}</tt:Minute><tt:Second>${d.getUTCSeconds()}</tt:Second></tt:Time>` +
    `<tt:Date><tt:Year>${d.getUTCFullYear()}</tt:Year><tt:Month>${d.getUTCMonth() + 1}</tt:Month><tt:Day>${d.getUTCDate()}</tt:Day></tt:Date></${el}>`
  );
}

const deviceServiceCapabilities = (el: string, tls: boolean, attrs = ''): string =>
  `<${el}${attrs}><tds:Network IPFilter="false" ZeroConfiguration="false" IPVersion6="false" DynDNS="false" HostnameFromDHCP="false" NTP="0"/>` +
  `<tds:Security TLS1.0="false" TLS1.1="false" TLS1.2="${tls}" OnboardKeyGeneration="false" AccessPolicyConfig="false" DefaultAccessPolicy="false" Dot1X="false" RemoteUserHandling="false" X.509Token="false" SAMLToken="false" KerberosToken="false" UsernameToken="true" HttpDigest="true" RELToken="false"/>` +
  `<tds:System DiscoveryResolve="true" DiscoveryBye="true" RemoteDiscovery="false" SystemBackup="false" SystemLogging="false" FirmwareUpgrade="false" HttpFirmwareUpgrade="false" HttpSystemBackup="false" HttpSystemLogging="false" HttpSupportInformation="false"/></${el}>`;

/**
 * Device service (ver10): date and time, capabilities, services, information, interfaces, hostname;
 * the settings (users, scopes, NTP, DNS, protocols, reboot) are device-settings.ts's.
 */
export async function deviceService(surface: OnvifSurface, action: string, body: Element, req: RequestInfo): Promise<string> {
  const base = baseUrl(surface, req);
  const tls = surface.httpsPort() !== undefined;
  const settings = await deviceSettings(surface, action, body);
  if (settings !== undefined) return settings;
  switch (action) {
    case 'GetSystemDateAndTime': {
      // UTC, kept by NTP on the host: clients use it to compute the offset of their UsernameToken Created.
      const now = new Date(surface.now());
      return (
        `<tds:GetSystemDateAndTimeResponse ${ns}><tds:SystemDateAndTime><tt:DateTimeType>NTP</tt:DateTimeType><tt:DaylightSavings>false</tt:DaylightSavings>` +
        `<tt:TimeZone><tt:TZ>${xmlEscape(surface.store.timeZone())}</tt:TZ></tt:TimeZone>${dateTime('tt:UTCDateTime', now)}${dateTime('tt:LocalDateTime', now)}</tds:SystemDateAndTime></tds:GetSystemDateAndTimeResponse>`
      );
    }
    case 'GetCapabilities': {
      const categories = new Set(descendants(body, 'Category').map((c) => (c.textContent ?? '').trim()));
      const all = categories.size === 0 || categories.has('All');
      const want = (c: string): boolean => all || categories.has(c);
      for (const c of categories) {
        if (!['All', 'Device', 'Media', 'Events', 'Imaging'].includes(c))
          throw new SoapFault('Receiver', 'ter:ActionNotSupported', `no ${c} service on this device`, 400, 'ter:NoSuchService');
      }
      const device = want('Device')
        ? `<tt:Device><tt:XAddr>${base}${PATHS.device}</tt:XAddr><tt:Network><tt:IPFilter>false</tt:IPFilter><tt:ZeroConfiguration>false</tt:ZeroConfiguration><tt:IPVersion6>false</tt:IPVersion6><tt:DynDNS>false</tt:DynDNS></tt:Network>` +
          `<tt:System><tt:DiscoveryResolve>true</tt:DiscoveryResolve><tt:DiscoveryBye>true</tt:DiscoveryBye><tt:RemoteDiscovery>false</tt:RemoteDiscovery><tt:SystemBackup>false</tt:SystemBackup><tt:SystemLogging>false</tt:SystemLogging><tt:FirmwareUpgrade>false</tt:FirmwareUpgrade>` +
          `<tt:SupportedVersions><tt:Major>2</tt:Major><tt:Minor>60</tt:Minor></tt:SupportedVersions></tt:System>` +
          `<tt:Security><tt:TLS1.1>false</tt:TLS1.1><tt:TLS1.2>${tls}</tt:TLS1.2><tt:OnboardKeyGeneration>false</tt:OnboardKeyGeneration><tt:AccessPolicyConfig>false</tt:AccessPolicyConfig><tt:X.509Token>false</tt:X.509Token><tt:SAMLToken>false</tt:SAMLToken><tt:KerberosToken>false</tt:KerberosToken><tt:RELToken>false</tt:RELToken></tt:Security></tt:Device>`
        : '';
      const events = want('Events')
        ? `<tt:Events><tt:XAddr>${base}${PATHS.events}</tt:XAddr><tt:WSSubscriptionPolicySupport>false</tt:WSSubscriptionPolicySupport><tt:WSPullPointSupport>true</tt:WSPullPointSupport><tt:WSPausableSubscriptionManagerInterfaceSupport>false</tt:WSPausableSubscriptionManagerInterfaceSupport></tt:Events>`
        : '';
      const media = want('Media')
        ? `<tt:Media><tt:XAddr>${base}${PATHS.media}</tt:XAddr><tt:StreamingCapabilities><tt:RTPMulticast>false</tt:RTPMulticast><tt:RTP_TCP>true</tt:RTP_TCP><tt:RTP_RTSP_TCP>true</tt:RTP_RTSP_TCP></tt:StreamingCapabilities></tt:Media>`
        : '';
      const imaging = want('Imaging') ? `<tt:Imaging><tt:XAddr>${base}${PATHS.imaging}</tt:XAddr></tt:Imaging>` : '';
      return `<tds:GetCapabilitiesResponse ${ns}><tds:Capabilities>${device}${events}${imaging}${media}</tds:Capabilities></tds:GetCapabilitiesResponse>`;
    }
    case 'GetServices': {
      const withCaps = text(body, 'IncludeCapability') === 'true';
      const service = (namespace: string, path: string, caps: string, major: number, minor: number): string =>
        `<tds:Service><tds:Namespace>${namespace}</tds:Namespace><tds:XAddr>${base}${path}</tds:XAddr>${withCaps ? `<tds:Capabilities>${caps}</tds:Capabilities>` : ''}` +
        `<tds:Version><tt:Major>${major}</tt:Major><tt:Minor>${minor}</tt:Minor></tds:Version></tds:Service>`;
      return (
        `<tds:GetServicesResponse ${ns}>` +
        service(NS.tds, PATHS.device, deviceServiceCapabilities('tds:Capabilities', tls, ` ${declare('tds')}`), 2, 60) +
        service(
          NS.trt,
          PATHS.media,
          `<trt:Capabilities ${declare('trt')} SnapshotUri="true" Rotation="false"><trt:ProfileCapabilities MaximumNumberOfProfiles="${surface.profiles().length}"/><trt:StreamingCapabilities RTPMulticast="false" RTP_TCP="true" RTP_RTSP_TCP="true"/></trt:Capabilities>`,
          2,
          60,
        ) +
        service(
          NS.tr2,
          PATHS.media2,
          `<tr2:Capabilities ${declare('tr2')} SnapshotUri="true" Rotation="false"><tr2:ProfileCapabilities MaximumNumberOfProfiles="${surface.profiles().length}"/><tr2:StreamingCapabilities RTSPStreaming="true" RTPMulticast="false" RTP_RTSP_TCP="true"/></tr2:Capabilities>`,
          2,
          60,
        ) +
        service(
          NS.tev,
          PATHS.events,
          `<tev:Capabilities ${declare('tev')} WSSubscriptionPolicySupport="false" WSPullPointSupport="true" WSPausableSubscriptionManagerInterfaceSupport="false"/>`,
          2,
          60,
        ) +
        service(NS.timg, PATHS.imaging, `<timg:Capabilities ${declare('timg')} ImageStabilization="false" Presets="false" AdaptablePreset="false"/>`, 2, 60) +
        `</tds:GetServicesResponse>`
      );
    }
    case 'GetServiceCapabilities':
      return `<tds:GetServiceCapabilitiesResponse ${ns}>${deviceServiceCapabilities('tds:Capabilities', tls)}</tds:GetServiceCapabilitiesResponse>`;
    case 'GetDeviceInformation': {
      const i = surface.information();
      return (
        `<tds:GetDeviceInformationResponse ${ns}><tds:Manufacturer>${xmlEscape(i.manufacturer)}</tds:Manufacturer><tds:Model>${xmlEscape(i.model)}</tds:Model>` +
        `<tds:FirmwareVersion>${xmlEscape(i.firmwareVersion)}</tds:FirmwareVersion><tds:SerialNumber>${xmlEscape(i.serialNumber)}</tds:SerialNumber>` +
        `<tds:HardwareId>${xmlEscape(i.hardwareId)}</tds:HardwareId></tds:GetDeviceInformationResponse>`
      );
    }
    case 'GetNetworkInterfaces':
      return `<tds:GetNetworkInterfacesResponse ${ns}>${networkInterfacesXml('tds:NetworkInterfaces', surface.serial)}</tds:GetNetworkInterfacesResponse>`;
    case 'GetHostname':
      return `<tds:GetHostnameResponse ${ns}><tds:HostnameInformation><tt:FromDHCP>false</tt:FromDHCP><tt:Name>${xmlEscape(surface.hostname())}</tt:Name></tds:HostnameInformation></tds:GetHostnameResponse>`;
    case 'GetDiscoveryMode':
      return `<tds:GetDiscoveryModeResponse ${ns}><tds:DiscoveryMode>Discoverable</tds:DiscoveryMode></tds:GetDiscoveryModeResponse>`;
    default:
      throw faults.actionNotSupported(action);
  }
}

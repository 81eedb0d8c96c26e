import { readFileSync } from 'node:fs';
import type { Element } from '@xmldom/xmldom';
import { declare, xmlEscape } from '../soap/namespaces.js';
import { childElements, descendants, text } from '../soap/soap-request.js';
import { faults, SoapFault } from '../soap/soap-fault.js';
import type { OnvifSurface } from '../surface.js';
import { USER_LEVELS, type UserLevel } from './device-store.js';

const ns = declare('tds', 'tt');

/** The Core spec's WSDL location: what GetWsdlUrl answers on cameras that do not host the files themselves. */
export const WSDL_URL = 'http://www.onvif.org/onvif/ver10/device/wsdl/devicemgmt.wsdl';

/**
 * Device operations that read or change the device's settings (users, scopes, NTP, time zone, DNS,
 * protocols, reboot). Undefined when the action is not one of them.
 */
export async function deviceSettings(surface: OnvifSurface, action: string, body: Element): Promise<string | undefined> {
  const store = surface.store;
  switch (action) {
    case 'GetWsdlUrl':
      return `<tds:GetWsdlUrlResponse ${ns}><tds:WsdlUrl>${WSDL_URL}</tds:WsdlUrl></tds:GetWsdlUrlResponse>`;
    case 'GetEndpointReference':
      return `<tds:GetEndpointReferenceResponse ${ns}><tds:GUID>${xmlEscape(surface.endpointReference)}</tds:GUID></tds:GetEndpointReferenceResponse>`;
    case 'GetUsers':
      // Names and levels only: a password is never answered.
      return `<tds:GetUsersResponse ${ns}>${store
        .users()
        .map((u) => `<tds:User><tt:Username>${xmlEscape(u.name)}</tt:Username><tt:UserLevel>${u.level}</tt:UserLevel></tds:User>`)
        .join('')}</tds:GetUsersResponse>`;
    case 'CreateUsers':
      await store.createUsers(usersOf(body).map((u) => ({ name: u.name, password: u.password ?? '', level: u.level })));
      return `<tds:CreateUsersResponse/>`;
    case 'SetUser':
      await store.setUsers(usersOf(body));
      return `<tds:SetUserResponse/>`;
    case 'DeleteUsers':
      await store.deleteUsers(
        childElements(body)
          .filter((c) => c.localName === 'Username')
          .map((c) => (c.textContent ?? '').trim()),
      );
      return `<tds:DeleteUsersResponse/>`;
    case 'GetScopes': {
      const fixed = new Set(surface.fixedScopes());
      return `<tds:GetScopesResponse ${ns}>${surface
        .scopes()
        .map(
          (s) => `<tds:Scopes><tt:ScopeDef>${fixed.has(s) ? 'Fixed' : 'Configurable'}</tt:ScopeDef><tt:ScopeItem>${xmlEscape(s)}</tt:ScopeItem></tds:Scopes>`,
        )
        .join('')}</tds:GetScopesResponse>`;
    }
    case 'SetScopes': {
      // SetScopes replaces the configurable scopes (name, location…); the fixed ones (profiles, hardware) stay.
      const wanted = childElements(body)
        .filter((c) => c.localName === 'Scopes')
        .map((c) => (c.textContent ?? '').trim());
      const fixed = surface.fixedScopes();
      for (const s of wanted) {
        if (fixed.includes(s)) throw new SoapFault('Sender', 'ter:OperationProhibited', `"${s}" is a fixed scope`, 400, 'ter:ScopeOverwrite');
      }
      await store.setScopes(wanted);
      return `<tds:SetScopesResponse/>`;
    }
    case 'GetNTP': {
      const ntp = store.ntp();
      const manual = ntp.servers
        .map(
          (s) =>
            `<tt:NTPManual><tt:Type>${s.type}</tt:Type>${s.type === 'DNS' ? `<tt:DNSname>${xmlEscape(s.value)}</tt:DNSname>` : `<tt:${s.type}Address>${xmlEscape(s.value)}</tt:${s.type}Address>`}</tt:NTPManual>`,
        )
        .join('');
      return `<tds:GetNTPResponse ${ns}><tds:NTPInformation><tt:FromDHCP>${ntp.fromDhcp}</tt:FromDHCP>${manual}</tds:NTPInformation></tds:GetNTPResponse>`;
    }
    case 'SetNTP': {
      const fromDhcp = text(body, 'FromDHCP') === 'true';
      const servers = childElements(body)
        .filter((c) => c.localName === 'NTPManual')
        .map((m) => {
          const type = text(m, 'Type');
          if (type !== 'IPv4' && type !== 'IPv6' && type !== 'DNS') throw faults.invalidArg('NTPManual Type is IPv4, IPv6 or DNS');
          const value = text(m, type === 'DNS' ? 'DNSname' : `${type}Address`) ?? '';
          if (!/^[A-Za-z0-9.:-]{1,253}$/.test(value)) throw faults.invalidArg(`"${value}" is not an NTP server address or name`);
          return { type, value } as const;
        });
      await store.setNtp({ fromDhcp, servers });
      return `<tds:SetNTPResponse/>`;
    }
    case 'SetSystemDateAndTime': {
      // The clock is the host's, kept by NTP: a client may keep it so (and set the time zone it is shown in),
      // but a manual time would make this camera lie about when its recordings and events happened.
      const type = text(body, 'DateTimeType');
      if (type !== 'NTP')
        throw new SoapFault(
          'Sender',
          'ter:InvalidArgVal',
          'this camera keeps its clock by NTP; set DateTimeType NTP (manual time is not supported)',
          400,
          'ter:NtpServerUndefined',
        );
      const tz = text(body, 'TimeZone', 'TZ');
      if (tz !== undefined) {
        if (!/^[A-Za-z<>+\-0-9,.:/]{1,64}$/.test(tz))
          throw new SoapFault('Sender', 'ter:InvalidArgVal', `"${tz}" is not a POSIX time zone`, 400, 'ter:InvalidTimeZone');
        await store.setTimeZone(tz);
      }
      return `<tds:SetSystemDateAndTimeResponse/>`;
    }
    case 'GetDNS': {
      const dns = resolvConf();
      return (
        `<tds:GetDNSResponse ${ns}><tds:DNSInformation><tt:FromDHCP>false</tt:FromDHCP>` +
        dns.search.map((d) => `<tt:SearchDomain>${xmlEscape(d)}</tt:SearchDomain>`).join('') +
        dns.servers
          .map(
            (a) =>
              `<tt:DNSManual><tt:Type>${a.includes(':') ? 'IPv6' : 'IPv4'}</tt:Type><tt:${a.includes(':') ? 'IPv6' : 'IPv4'}Address>${xmlEscape(a)}</tt:${a.includes(':') ? 'IPv6' : 'IPv4'}Address></tt:DNSManual>`,
          )
          .join('') +
        `</tds:DNSInformation></tds:GetDNSResponse>`
      );
    }
    case 'GetNetworkProtocols':
      return (
        `<tds:GetNetworkProtocolsResponse ${ns}>` +
        `<tds:NetworkProtocols><tt:Name>HTTP</tt:Name><tt:Enabled>true</tt:Enabled><tt:Port>${surface.port()}</tt:Port></tds:NetworkProtocols>` +
        `<tds:NetworkProtocols><tt:Name>HTTPS</tt:Name><tt:Enabled>false</tt:Enabled><tt:Port>443</tt:Port></tds:NetworkProtocols>` +
        `<tds:NetworkProtocols><tt:Name>RTSP</tt:Name><tt:Enabled>true</tt:Enabled><tt:Port>${surface.rtspPort()}</tt:Port></tds:NetworkProtocols>` +
        `</tds:GetNetworkProtocolsResponse>`
      );
    case 'SystemReboot':
      // The runtime has no restart a plugin may ask for: the service manager (or `lookout` on the operator's side) restarts it.
      throw new SoapFault(
        'Receiver',
        'ter:ActionNotSupported',
        'SystemReboot: this camera cannot restart itself from ONVIF; restart the device through its service manager or the operator tool',
        500,
      );
    default:
      return undefined;
  }
}

function usersOf(body: Element): { name: string; password?: string; level: UserLevel }[] {
  const users = descendants(body, 'User');
  if (users.length === 0) throw faults.invalidArg('no User given');
  return users.map((u) => {
    const level = text(u, 'UserLevel') ?? '';
    if (!(USER_LEVELS as readonly string[]).includes(level)) throw faults.invalidArg(`UserLevel is Administrator, Operator or User, not "${level}"`);
    return { name: text(u, 'Username') ?? '', password: text(u, 'Password'), level: level as UserLevel };
  });
}

/** The resolver configuration the host uses (what a camera's DNS settings are): servers and search domains. */
function resolvConf(): { servers: string[]; search: string[] } {
  let conf = '';
  try {
    conf = readFileSync('/etc/resolv.conf', 'utf8');
  } catch {
    return { servers: [], search: [] };
  }
  const servers: string[] = [];
  const search: string[] = [];
  for (const line of conf.split('\n')) {
    const [key, ...rest] = line.trim().split(/\s+/);
    if (key === 'nameserver' && rest[0]) servers.push(rest[0]);
    if (key === 'search') search.push(...rest);
  }
  return { servers: servers.slice(0, 4), search: search.slice(0, 4) };
}

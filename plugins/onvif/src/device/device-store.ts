import { readFile } from 'node:fs/promises';
import { writeFileAtomic, z } from 'lookout/core';
import { SoapFault } from '../soap/soap-fault.js';

/** ONVIF user levels (tt:UserLevel), most powerful first. */
export const USER_LEVELS = ['Administrator', 'Operator', 'User'] as const;
export type UserLevel = (typeof USER_LEVELS)[number];

export interface OnvifUser {
  name: string;
  /**
   * Kept as the password itself: WS-Security's PasswordDigest is SHA1(nonce + Created + password),
   * so no hash of it can verify a token (HTTP Digest alone could live with HA1). The file is 0600
   * under the device's data root, and never answered: GetUsers lists names and levels only.
   */
  password: string;
  level: UserLevel;
}

const StoredSchema = z.object({
  users: z
    .array(z.object({ name: z.string(), password: z.string(), level: z.enum(USER_LEVELS) }))
    .max(256)
    .default([]),
  /** Scopes set with SetScopes (the configurable ones), replacing the defaults. */
  scopes: z.array(z.string()).max(64).optional(),
  ntp: z.object({ fromDhcp: z.boolean(), servers: z.array(z.object({ type: z.enum(['IPv4', 'IPv6', 'DNS']), value: z.string() })).max(8) }).optional(),
  timeZone: z.string().max(64).optional(),
});
export type StoredState = z.output<typeof StoredSchema>;

export const LIMITS = { users: 16, nameLength: 64, passwordLength: 256, scopes: 16, scopeLength: 128, ntpServers: 4 } as const;

const userFault = (subcode: string, message: string): SoapFault => new SoapFault('Sender', 'ter:OperationProhibited', message, 400, subcode);

/**
 * What ONVIF clients change on the device and expect back after a restart: the users beside the
 * configured one, the configurable scopes, the NTP settings and the time zone. One JSON file
 * (`/data/config/onvif_device.json`, mode 0600), written atomically on every change.
 */
export class DeviceStore {
  private state: StoredState = { users: [] };

  constructor(
    private readonly path: string,
    /** The configured user (ONVIF_USER / ONVIF_PASSWORD): a fixed Administrator, changed in the configuration only. */
    private readonly fixed: { name: string; password: string | undefined },
  ) {}

  async load(): Promise<void> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    this.state = StoredSchema.parse(JSON.parse(text));
  }

  private async save(next: StoredState): Promise<void> {
    await writeFileAtomic(this.path, JSON.stringify(next, null, 2), 0o600);
    this.state = next;
  }

  get fixedUser(): string {
    return this.fixed.name;
  }

  /** All users, the configured one first. */
  users(): { name: string; level: UserLevel; fixed: boolean }[] {
    return [{ name: this.fixed.name, level: 'Administrator', fixed: true }, ...this.state.users.map((u) => ({ name: u.name, level: u.level, fixed: false }))];
  }

  /** The password and level of a user name, for the authentication checks. */
  lookup(name: string): { password: string; level: UserLevel } | undefined {
    if (name === this.fixed.name) return this.fixed.password === undefined ? undefined : { password: this.fixed.password, level: 'Administrator' };
    const u = this.state.users.find((x) => x.name === name);
    return u ? { password: u.password, level: u.level } : undefined;
  }

  /** CreateUsers: all or none. */
  async createUsers(list: OnvifUser[]): Promise<void> {
    const names = new Set(this.users().map((u) => u.name));
    for (const u of list) {
      checkUser(u);
      if (names.has(u.name)) throw userFault('ter:UsernameClash', `the user "${u.name}" already exists`);
      names.add(u.name);
    }
    if (this.state.users.length + list.length + 1 > LIMITS.users) throw userFault('ter:TooManyUsers', `at most ${LIMITS.users} users`);
    await this.save({ ...this.state, users: [...this.state.users, ...list] });
  }

  /** DeleteUsers: all or none; the configured user cannot go. */
  async deleteUsers(names: string[]): Promise<void> {
    for (const n of names) {
      if (n === this.fixed.name) throw userFault('ter:FixedUser', `"${n}" is the configured user (ONVIF_USER); it is changed in the configuration`);
      if (!this.state.users.some((u) => u.name === n)) throw new SoapFault('Sender', 'ter:InvalidArgVal', `no user "${n}"`, 400, 'ter:UsernameMissing');
    }
    await this.save({ ...this.state, users: this.state.users.filter((u) => !names.includes(u.name)) });
  }

  /** SetUser: new passwords and levels of existing users, all or none. */
  async setUsers(list: { name: string; password?: string; level: UserLevel }[]): Promise<void> {
    const users = this.state.users.map((u) => ({ ...u }));
    for (const change of list) {
      if (change.name === this.fixed.name)
        throw userFault('ter:FixedUser', `"${change.name}" is the configured user (ONVIF_USER); it is changed in the configuration`);
      const u = users.find((x) => x.name === change.name);
      if (!u) throw new SoapFault('Sender', 'ter:InvalidArgVal', `no user "${change.name}"`, 400, 'ter:UsernameMissing');
      if (change.password !== undefined) u.password = change.password;
      u.level = change.level;
      checkUser(u);
    }
    await this.save({ ...this.state, users });
  }

  scopes(defaults: string[]): string[] {
    return this.state.scopes ?? defaults;
  }

  async setScopes(scopes: string[]): Promise<void> {
    if (scopes.length > LIMITS.scopes) throw new SoapFault('Sender', 'ter:OperationProhibited', `at most ${LIMITS.scopes} scopes`, 400, 'ter:TooManyScopes');
    for (const s of scopes) {
      if (s.length === 0 || s.length > LIMITS.scopeLength || !/^[\x21-\x7e]+$/.test(s))
        throw new SoapFault('Sender', 'ter:InvalidArgs', `a scope is a URI of 1 to ${LIMITS.scopeLength} printable characters`, 400, 'ter:InvalidArgVal');
    }
    await this.save({ ...this.state, scopes });
  }

  ntp(): NonNullable<StoredState['ntp']> {
    return this.state.ntp ?? { fromDhcp: false, servers: [] };
  }

  async setNtp(ntp: NonNullable<StoredState['ntp']>): Promise<void> {
    if (ntp.servers.length > LIMITS.ntpServers)
      throw new SoapFault('Sender', 'ter:InvalidArgs', `at most ${LIMITS.ntpServers} NTP servers`, 400, 'ter:InvalidArgVal');
    await this.save({ ...this.state, ntp });
  }

  timeZone(): string {
    return this.state.timeZone ?? 'UTC0';
  }

  async setTimeZone(tz: string): Promise<void> {
    await this.save({ ...this.state, timeZone: tz });
  }
}

function checkUser(u: OnvifUser): void {
  if (u.name.length === 0) throw new SoapFault('Sender', 'ter:InvalidArgVal', 'a user needs a name', 400, 'ter:UsernameMissing');
  if (u.name.length > LIMITS.nameLength) throw userFault('ter:UsernameTooLong', `a user name has at most ${LIMITS.nameLength} characters`);
  // A ':' would make HTTP Digest's HA1 (user:realm:password) ambiguous.
  if (!/^[\x21-\x7e]+$/.test(u.name) || u.name.includes(':'))
    throw new SoapFault('Sender', 'ter:InvalidArgs', 'a user name is printable ASCII without spaces or ":"', 400, 'ter:InvalidArgVal');
  if (u.password.length === 0) throw userFault('ter:PasswordTooWeak', 'a user needs a password');
  if (u.password.length > LIMITS.passwordLength) throw userFault('ter:PasswordTooLong', `a password has at most ${LIMITS.passwordLength} characters`);
}

/**
 * Where the hub token lives in the page: in memory always; for this tab (so that a reload does not
 * ask again) only encrypted: AES-GCM ciphertext in sessionStorage (gone with the tab), its key a
 * non-extractable CryptoKey in IndexedDB (it can be used by this origin's script, never read out as
 * bytes). Neither store holds the token in clear, and the token is never in a URL. Without a secure
 * context (plain http beyond loopback) WebCrypto is absent: the token then stays in memory only.
 */
const DB = 'lookout-console';
const STORE = 'keys';
const KEY_ID = 'token-key';
const ITEM = 'lookout.token.sealed';

let memory: string | null = null;

export function currentToken(): string | null {
  return memory;
}

export function canKeepForTab(): boolean {
  return typeof crypto !== 'undefined' && crypto.subtle !== undefined && typeof indexedDB !== 'undefined' && window.isSecureContext;
}

export async function setToken(token: string | null, keepForTab: boolean): Promise<void> {
  memory = token;
  sessionStorage.removeItem(ITEM);
  if (token === null || !keepForTab || !canKeepForTab()) return;
  const key = await tokenKey(true);
  if (!key) return;
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, key, new TextEncoder().encode(token)));
  sessionStorage.setItem(ITEM, `${b64(iv)}.${b64(sealed)}`);
}

/** The token kept for this tab, opened; null when there is none (or it cannot be opened any more). */
export async function restoreToken(): Promise<string | null> {
  const item = sessionStorage.getItem(ITEM);
  if (!item || !canKeepForTab()) return null;
  try {
    const key = await tokenKey(false);
    if (!key) return null;
    const [iv, sealed] = item.split('.').map(unb64);
    const plain = await crypto.subtle.decrypt({ name: 'AES-GCM', iv }, key, sealed);
    memory = new TextDecoder().decode(plain);
    return memory;
  } catch {
    sessionStorage.removeItem(ITEM);
    return null;
  }
}

export function forgetToken(): void {
  memory = null;
  sessionStorage.removeItem(ITEM);
}

function openDb(): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(DB, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error ?? new Error('indexedDB open failed'));
  });
}

async function tokenKey(create: boolean): Promise<CryptoKey | null> {
  const db = await openDb();
  try {
    const existing = await new Promise<CryptoKey | undefined>((resolve, reject) => {
      const req = db.transaction(STORE).objectStore(STORE).get(KEY_ID);
      req.onsuccess = () => resolve(req.result as CryptoKey | undefined);
      req.onerror = () => reject(req.error ?? new Error('indexedDB read failed'));
    });
    if (existing || !create) return existing ?? null;
    const key = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);
    await new Promise<void>((resolve, reject) => {
      const tx = db.transaction(STORE, 'readwrite');
      tx.objectStore(STORE).put(key, KEY_ID);
      tx.oncomplete = () => resolve();
      tx.onerror = () => reject(tx.error ?? new Error('indexedDB write failed'));
    });
    return key;
  } finally {
    db.close();
  }
}

const b64 = (bytes: Uint8Array): string => btoa(String.fromCharCode(...bytes));
const unb64 = (s: string): Uint8Array<ArrayBuffer> => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));

/**
 * Whether a device id can name a folder of its own. A device id is one topic level (no `/`), yet `.`
 * and `..` climb out of the folder around it, `\` is a separator on Windows, and an empty id names
 * the folder around it.
 */
export function namesOneFolder(deviceId: string): boolean {
  return deviceId !== '' && deviceId !== '.' && deviceId !== '..' && !deviceId.includes('/') && !deviceId.includes('\\');
}

/**
 * A folder named after a device: `template` with each `{device}` replaced by its id; undefined for
 * an id that would name another folder (the caller refuses it with its own error code).
 */
export function deviceFolderOf(template: string, deviceId: string): string | undefined {
  return namesOneFolder(deviceId) ? template.replaceAll('{device}', deviceId) : undefined;
}

import { xmlEscape } from '../soap/namespaces.js';
import { utc } from './times.js';

/** The ONVIF topic-expression dialect every emitted Topic uses. */
export const CONCRETE_SET = 'http://www.onvif.org/ver10/tev/topicExpression/ConcreteSet';

/** One event as it waits in a subscription's queue; rendered to XML only when pulled. */
export interface EventMessage {
  /** `tns1:…` concrete topic. */
  topic: string;
  utcMs: number;
  /** Set on property topics (IsPeople, IsMotion); absent on one-off events (a person seen, a configuration changed). */
  operation?: 'Initialized' | 'Changed' | 'Deleted';
  source: ReadonlyArray<readonly [string, string]>;
  data: ReadonlyArray<readonly [string, string]>;
}

function simpleItems(items: EventMessage['source']): string {
  return items.map(([name, value]) => `<tt:SimpleItem Name="${xmlEscape(name)}" Value="${xmlEscape(value)}"/>`).join('');
}

/**
 * A wsnt:NotificationMessage. Uses the prefixes wsnt, tt and tns1 (the Topic's text is a QName):
 * the caller declares them on the root element it returns.
 */
export function notificationXml(m: EventMessage): string {
  const op = m.operation ? ` PropertyOperation="${m.operation}"` : '';
  const source = m.source.length ? `<tt:Source>${simpleItems(m.source)}</tt:Source>` : '';
  const data = m.data.length ? `<tt:Data>${simpleItems(m.data)}</tt:Data>` : '';
  return (
    `<wsnt:NotificationMessage><wsnt:Topic Dialect="${CONCRETE_SET}">${xmlEscape(m.topic)}</wsnt:Topic>` +
    `<wsnt:Message><tt:Message UtcTime="${utc(m.utcMs)}"${op}>${source}${data}</tt:Message></wsnt:Message></wsnt:NotificationMessage>`
  );
}

"""paho-mqtt (Debian's python3-paho-mqtt) as an MQTT 5 client, driven by the tests.

Reads one JSON object from argv[1]: host, port, client_id, username, password, subscribe (a filter
or null), messages (how many to wait for), publish (null or {topic, payload, qos}), timeout (seconds).
Writes one JSON line per event to stdout: connack (its reason code), suback (reason codes),
message (topic, payload, properties), published, done or timeout; exits 0 once it has what it waited for.
"""
import json
import sys
import threading

import paho.mqtt.client as mqtt
from paho.mqtt.properties import Properties
from paho.mqtt.packettypes import PacketTypes

args = json.loads(sys.argv[1])
done = threading.Event()
received = []
# paho's network thread and the main thread both report: one line at a time.
printing = threading.Lock()


def emit(**event):
    with printing:
        sys.stdout.write(json.dumps(event) + "\n")
        sys.stdout.flush()


def on_connect(client, userdata, flags, reason, properties):
    emit(event="connack", reason=reason.value, protocol=client._protocol)
    if reason.value != 0:
        done.set()
        return
    if args.get("subscribe"):
        client.subscribe(args["subscribe"], qos=1)
    elif args.get("publish"):
        publish(client)


def publish(client):
    p = args["publish"]
    props = Properties(PacketTypes.PUBLISH)
    if p.get("response_topic"):
        props.ResponseTopic = p["response_topic"]
    if p.get("correlation"):
        props.CorrelationData = p["correlation"].encode()
    if p.get("user"):
        props.UserProperty = [tuple(kv) for kv in p["user"]]
    # Called from paho's network thread: waiting here for the PUBACK would block the thread that reads it.
    client.publish(p["topic"], p["payload"], qos=p.get("qos", 1), properties=props)


def on_publish(client, userdata, mid):
    emit(event="published", mid=mid)
    if not args.get("messages"):
        done.set()


def on_subscribe(client, userdata, mid, reasons, properties):
    emit(event="suback", reasons=[r.value for r in reasons])
    if args.get("publish"):
        publish(client)
    if not args.get("messages"):
        done.set()


def on_message(client, userdata, msg):
    props = msg.properties.json() if msg.properties is not None else {}
    received.append(msg.topic)
    emit(event="message", topic=msg.topic, payload=msg.payload.decode(errors="replace"), properties=props)
    if len(received) >= args.get("messages", 0):
        done.set()


def on_disconnect(client, userdata, reason, properties=None):
    emit(event="disconnect", reason=getattr(reason, "value", reason))
    done.set()


client = mqtt.Client(client_id=args.get("client_id", ""), protocol=mqtt.MQTTv5)
if args.get("username") is not None:
    client.username_pw_set(args["username"], args.get("password"))
client.on_connect = on_connect
client.on_subscribe = on_subscribe
client.on_message = on_message
client.on_publish = on_publish
client.on_disconnect = on_disconnect
client.connect(args["host"], args["port"], clean_start=True)
client.loop_start()
ok = done.wait(args.get("timeout", 10))
emit(event="done" if ok else "timeout", received=len(received))
client.disconnect()
client.loop_stop()

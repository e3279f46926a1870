"""Data channels of one aiortc connection, for aiortc_wamp_peer.py (DataChannelTests).

Options (add_arguments):
  --data-channel LABEL[,unordered][,retransmits=N]   the offerer creates it (repeatable);
                     the answerer takes whatever the peer opens
  --data-burst LABEL:N:BYTES   once LABEL is open, N numbered binary messages of BYTES
                     bytes ("PSEQ" + a 64-bit big-endian number + zero filler, what
                     peer's --data-burst counts), never more than 1 MiB buffered
  --data-send SECONDS:LABEL:TEXT   TEXT on LABEL, SECONDS after connected (repeatable)
  --data-close SECONDS:LABEL       close LABEL then
  --data-echo        send every message received back on its channel
  --sctp-legacy      write the data section in the form before RFC 8841 (DTLS/SCTP 5000 with
                     a=sctpmap, aiortc's legacy switch); once connected, a "sctp" event says
                     whether aiortc still holds that form after the peer's description, and
                     the peer's max-message-size it took

result() gives, by label: messagesSent/bytesSent/messagesReceived/bytesReceived, the
numbered messages received (received, missing, duplicates, outOfOrder), the texts
received (at most 50), and the channel's last readyState.
"""

import asyncio
import struct
import time

MAGIC = b"PSEQ"


def add_arguments(ap):
    ap.add_argument("--data-channel", action="append", default=[], metavar="SPEC")
    ap.add_argument("--data-burst", action="append", default=[], metavar="LABEL:N:BYTES")
    ap.add_argument("--data-send", action="append", default=[], metavar="SECONDS:LABEL:TEXT")
    ap.add_argument("--data-close", action="append", default=[], metavar="SECONDS:LABEL")
    ap.add_argument("--data-echo", action="store_true")
    ap.add_argument("--sctp-legacy", action="store_true")


class Counts:
    def __init__(self):
        self.sent = self.bytes_sent = self.received = self.bytes_received = 0
        self.seen = set()
        self.duplicates = self.out_of_order = 0
        self.highest = None
        self.texts = []
        self.state = "connecting"
        self.first_at = self.last_at = None  # monotonic s of the first and last numbered message

    def take(self, message):
        self.received += 1
        self.bytes_received += len(message.encode() if isinstance(message, str) else message)
        if isinstance(message, str):
            if len(self.texts) < 50:
                self.texts.append(message)
            return
        if len(message) >= 12 and message[:4] == MAGIC:
            self.last_at = time.monotonic()
            if self.first_at is None:
                self.first_at = self.last_at
            n = struct.unpack(">Q", message[4:12])[0]
            if n in self.seen:
                self.duplicates += 1
                return
            self.seen.add(n)
            if self.highest is not None and n < self.highest:
                self.out_of_order += 1
            else:
                self.highest = n

    def result(self):
        numbered = len(self.seen)
        return {"messagesSent": self.sent, "bytesSent": self.bytes_sent, "messagesReceived": self.received,
                "bytesReceived": self.bytes_received, "state": self.state, "texts": self.texts,
                "numbered": {"received": numbered, "duplicates": self.duplicates, "outOfOrder": self.out_of_order,
                             "missing": (self.highest + 1 - numbered) if self.highest is not None else 0,
                             "seconds": round(self.last_at - self.first_at, 4) if self.first_at is not None else None}}


class DataChannels:
    def __init__(self, pc, args, offerer, emit):
        self.args, self.emit = args, emit
        self.pc = pc
        if args.sctp_legacy:
            pc._sctpLegacySdp = True  # aiortc 1.16's switch for the DTLS/SCTP + a=sctpmap form
        self.channels = {}
        self.counts = {}
        self.tasks = []
        if offerer:
            for spec in args.data_channel:
                parts = spec.split(",")
                options = {"ordered": "unordered" not in parts[1:]}
                for p in parts[1:]:
                    if p.startswith("retransmits="):
                        options["maxRetransmits"] = int(p.split("=", 1)[1])
                self.attach(pc.createDataChannel(parts[0], **options))
        pc.on("datachannel", self.attach)

    def attach(self, channel):
        label = channel.label
        self.channels[label] = channel
        counts = self.counts.setdefault(label, Counts())
        self.emit({"event": "datachannel", "label": label, "id": channel.id, "ordered": channel.ordered,
                   "maxRetransmits": channel.maxRetransmits})

        @channel.on("open")
        def on_open():
            counts.state = "open"
            self.emit({"event": "datachannelState", "label": label, "state": "open"})
            self.tasks.append(asyncio.ensure_future(self.burst(channel)))

        @channel.on("close")
        def on_close():
            counts.state = "closed"
            self.emit({"event": "datachannelState", "label": label, "state": "closed"})

        @channel.on("message")
        def on_message(message):
            counts.take(message)
            if self.args.data_echo:
                self.send(channel, message)

        if channel.readyState == "open":
            on_open()

    def send(self, channel, message):
        counts = self.counts[channel.label]
        channel.send(message)
        counts.sent += 1
        counts.bytes_sent += len(message.encode() if isinstance(message, str) else message)

    async def burst(self, channel):
        for spec in self.args.data_burst:
            label, n, size = spec.rsplit(":", 2)
            if label != channel.label:
                continue
            for i in range(int(n)):
                while channel.bufferedAmount > (1 << 20):
                    await asyncio.sleep(0.002)
                body = MAGIC + struct.pack(">Q", i)
                self.send(channel, body + bytes(int(size) - 12))

    def connected(self):
        """Schedules --data-send and --data-close from now."""
        if self.args.sctp_legacy and self.pc.sctp is not None:
            self.emit({"event": "sctp", "legacySdp": self.pc._sctpLegacySdp,
                       "remoteMaxMessageSize": self.pc.sctp._remote_max_message_size})
        for spec in self.args.data_send:
            seconds, label, text = spec.split(":", 2)
            self.tasks.append(asyncio.ensure_future(self.later(float(seconds), label, text)))
        for spec in self.args.data_close:
            seconds, label = spec.split(":", 1)
            self.tasks.append(asyncio.ensure_future(self.later(float(seconds), label, None)))

    async def later(self, seconds, label, text):
        await asyncio.sleep(seconds)
        channel = self.channels.get(label)
        if channel is None or channel.readyState != "open":
            self.emit({"event": "dataError", "label": label, "reason": "not open"})
            return
        if text is None:
            channel.close()
        else:
            self.send(channel, text)

    def result(self):
        for t in self.tasks:
            t.cancel()
        return {label: c.result() for label, c in self.counts.items()}

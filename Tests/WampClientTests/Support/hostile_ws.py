#!/usr/bin/env python3
"""A deliberately hostile WebSocket "router" for the WAMP client tests.

Listens on 127.0.0.1 (free port, printed as the first line on stdout) and, per
request path, misbehaves right after the client's first message (its HELLO):

  /nonjson       sends text that is not JSON
  /arity         sends WELCOME with a missing element: [2, 1]
  /negative-id   sends WELCOME with session id -5
  /huge          sends a 2 MiB text message (the client's limit is lower)
  /welcome-then-16mb  sends a valid WELCOME, then a 16 MiB EVENT (over the default limit)
  /midhandshake  closes the TCP connection in the middle of the HTTP upgrade
  /binary        sends a binary frame
  /nosubprotocol completes the upgrade without choosing a subprotocol
  /welcome-then-garbage  sends a valid WELCOME, then a message of unknown type 99

Every message the client sends after the misbehaviour is printed on stdout as
`got PATH MESSAGE` (so a test can check the client answered with ABORT).
Stdlib only; one thread per connection; runs until killed (the test stops it by pid).
"""
import base64, hashlib, socket, struct, sys, threading

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

def read_frame(conn):
    head = conn.recv(2)
    if len(head) < 2:
        return None
    length = head[1] & 0x7F
    if length == 126:
        length = struct.unpack("!H", conn.recv(2))[0]
    elif length == 127:
        length = struct.unpack("!Q", conn.recv(8))[0]
    mask = conn.recv(4) if head[1] & 0x80 else b"\0\0\0\0"
    data = b""
    while len(data) < length:
        chunk = conn.recv(length - len(data))
        if not chunk:
            return None
        data += chunk
    return bytes(b ^ mask[i % 4] for i, b in enumerate(data))

def frame(payload, opcode=1):
    n = len(payload)
    if n < 126:
        header = struct.pack("!BB", 0x80 | opcode, n)
    elif n < 65536:
        header = struct.pack("!BBH", 0x80 | opcode, 126, n)
    else:
        header = struct.pack("!BBQ", 0x80 | opcode, 127, n)
    return header + payload

def serve(conn):
    try:
        request = b""
        while b"\r\n\r\n" not in request:
            chunk = conn.recv(4096)
            if not chunk:
                return
            request += chunk
        lines = request.decode("latin-1").split("\r\n")
        path = lines[0].split(" ")[1]
        headers = {l.split(":", 1)[0].strip().lower(): l.split(":", 1)[1].strip() for l in lines[1:] if ":" in l}
        if path == "/midhandshake":
            conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websock")
            return
        accept = base64.b64encode(hashlib.sha1(headers.get("sec-websocket-key", "").encode() + GUID).digest()).decode()
        protocol = "" if path == "/nosubprotocol" else "Sec-WebSocket-Protocol: wamp.2.json\r\n"
        conn.sendall(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      f"Sec-WebSocket-Accept: {accept}\r\n{protocol}\r\n").encode())
        if read_frame(conn) is None:  # the HELLO
            return
        if path == "/nonjson":
            conn.sendall(frame(b"this is not json"))
        elif path == "/arity":
            conn.sendall(frame(b"[2, 1]"))
        elif path == "/negative-id":
            conn.sendall(frame(b'[2, -5, {"roles": {"broker": {}}}]'))
        elif path == "/huge":
            conn.sendall(frame(b'"' + b"x" * (2 << 20) + b'"'))
        elif path == "/binary":
            conn.sendall(frame(b"\x01\x02", opcode=2))
        elif path == "/welcome-then-16mb":
            conn.sendall(frame(b'[2, 1234, {"roles": {"broker": {}}}]'))
            conn.sendall(frame(b'[36, 1, 2, {}, ["' + b"x" * (16 << 20) + b'"]]'))
        elif path == "/welcome-then-garbage":
            conn.sendall(frame(b'[2, 1234, {"roles": {"broker": {}}}]'))
            conn.sendall(frame(b"[99, 1]"))
        while (message := read_frame(conn)) is not None:  # report what the client says, until it gives up
            print(f"got {path[1:]} {message.decode('utf-8', 'replace')}", flush=True)
    except OSError:
        pass
    finally:
        conn.close()

def main():
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    print(server.getsockname()[1], flush=True)
    while True:
        conn, _ = server.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()

if __name__ == "__main__":
    main()

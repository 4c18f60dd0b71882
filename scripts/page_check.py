#!/usr/bin/python3
"""Drives the live page in a real headless Chromium over the DevTools protocol (python3-websocket) and
checks what a person would see: the page connects to the device, shows the camera's live picture, a press
on the virtual Camera Control (pointer down, dragged down past the full-press force, up) produces a capture
event that the page lists, and a screenshot has something drawn where the force trace, the overlay and the
camera preview are.

    scripts/page_check.py URL [--screenshot OUT.png]

Exit status 0 when every check holds; 1 with the failed check on stderr. Used by scripts/test-page."""
import base64
import json
import os
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request
import zlib

import websocket


def fail(message):
    print("page_check: FAILED: " + message, file=sys.stderr)
    sys.exit(1)


class DevTools:
    """One page's DevTools session: send a command, wait for its answer (events are skipped)."""

    def __init__(self, url):
        self.socket = websocket.create_connection(url, timeout=30)
        self.next_id = 0

    def call(self, method, **params):
        self.next_id += 1
        self.socket.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    fail("%s: %s" % (method, message["error"]))
                return message.get("result", {})

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")

    def wait_for(self, expression, what, seconds=30):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.evaluate(expression):
                return
            time.sleep(0.1)
        fail("%s (waited %d s; the page's events: %s)" % (what, seconds, self.evaluate("document.getElementById('events').innerText")))

    def mouse(self, kind, x, y, buttons):
        self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", buttons=buttons, clickCount=1)


def start_chromium(url, profile):
    """Starts headless Chromium on `url`; returns the process and the page's DevTools WebSocket URL."""
    process = subprocess.Popen(
        ["chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--remote-debugging-port=0",
         "--user-data-dir=" + profile, "--window-size=1280,900", url],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    port = None
    while time.monotonic() < deadline and port is None:
        line = process.stderr.readline()
        if not line:
            if process.poll() is not None:
                fail("chromium exited (%s)" % process.returncode)
            continue
        if "DevTools listening on ws://" in line:
            port = int(line.split("ws://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
    if port is None:
        fail("chromium did not open its DevTools port")
    while time.monotonic() < deadline:
        pages = json.load(urllib.request.urlopen("http://127.0.0.1:%d/json/list" % port, timeout=10))
        for page in pages:
            if page.get("type") == "page" and page.get("url", "").startswith(url):
                return process, page["webSocketDebuggerUrl"]
        time.sleep(0.1)
    fail("chromium did not open the page")


def png_pixels(data):
    """Decodes an 8-bit, non-interlaced RGB or RGBA PNG into (width, height, channels, rows)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail("the screenshot is not a PNG")
    offset, idat, header = 8, b"", None
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        body = data[offset + 8:offset + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        offset += 12 + length
    width, height, depth, color, _, _, interlace = header
    if depth != 8 or color not in (2, 6) or interlace:
        fail("unexpected PNG format %s" % (header,))
    channels = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous, position = [], bytearray(stride), 0
    for _ in range(height):
        kind, line = raw[position], bytearray(raw[position + 1:position + 1 + stride])
        position += 1 + stride
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        rows.append(line)
        previous = line
    return width, height, channels, rows


def drawn_fraction(image, box, scale):
    """The fraction of pixels inside `box` (CSS px) that are not the canvas's black background."""
    width, height, channels, rows = image
    x0, y0 = int(box["x"] * scale) + 2, int(box["y"] * scale) + 2
    x1, y1 = min(width, int((box["x"] + box["width"]) * scale) - 2), min(height, int((box["y"] + box["height"]) * scale) - 2)
    total = drawn = 0
    for y in range(y0, y1):
        row = rows[y]
        for x in range(x0, x1):
            total += 1
            if max(row[x * channels:x * channels + 3]) > 24:
                drawn += 1
    return drawn / total if total else 0.0


def abuse(url):
    """Bad HTTP input while the device is being served: oversized heads, garbage, 300 connections at once,
    and slow heads kept open (slowloris). Each must get its refusal; returns the slow sockets (the press
    that follows shows the device is still served meanwhile)."""
    import socket
    host, port = url.split("//", 1)[1].rstrip("/").split(":")
    port = int(port)

    def exchange(payload):
        sock = socket.create_connection((host, port), timeout=10)
        sock.sendall(payload)
        answer = b""
        while True:
            chunk = sock.recv(4096)
            if not chunk:
                break
            answer += chunk
        sock.close()
        return answer

    for payload, status in ((b"GET / HTTP/1.1\r\nX: " + b"y" * 20000 + b"\r\n\r\n", b"431"),
                            (b"\x00\x01\x02garbage\r\n\r\n", b"400"),
                            (b"POST /control HTTP/1.1\r\nContent-Length: 99999999\r\n\r\n", b"413")):
        for _ in range(20):
            answer = exchange(payload)
            if not answer.startswith(b"HTTP/1.1 " + status + b" "):
                fail("bad input %r got %r, not %s" % (payload[:30], answer[:40], status.decode()))
    slow = []
    for _ in range(4):
        sock = socket.create_connection((host, port), timeout=10)
        sock.sendall(b"GET / HTTP/1.1\r\nX-Slow: ")
        slow.append(sock)
    crowd, refused = [], 0
    for _ in range(300):
        crowd.append(socket.create_connection((host, port), timeout=10))
    for sock in crowd:
        sock.settimeout(0.5)
        try:
            if sock.recv(64).startswith(b"HTTP/1.1 503 "):
                refused += 1
        except socket.timeout:
            pass
        sock.close()
    if refused < 300 - 64:
        fail("only %d of 300 connections past the bound were refused with 503" % refused)
    print("page_check: bad input refused (431, 400, 413 x20 each; %d of 300 crowding connections got 503)" % refused)
    return slow


def main():
    if len(sys.argv) < 2:
        fail("usage: page_check.py URL [--screenshot OUT.png]")
    url = sys.argv[1]
    out = sys.argv[sys.argv.index("--screenshot") + 1] if "--screenshot" in sys.argv else None
    with tempfile.TemporaryDirectory() as profile:
        process, ws = start_chromium(url, profile)
        try:
            page = DevTools(ws)
            page.wait_for("document.getElementById('status').textContent === 'live'", "the page's event stream is live")
            page.wait_for("document.getElementById('device').textContent.includes('Simulator')", "the page names the device")
            page.wait_for("getComputedStyle(document.getElementById('virtual')).display === 'block'",
                          "the virtual Camera Control is shown for a simulator")
            page.wait_for("document.getElementById('counters').textContent.includes('framesReceived')", "the link counters")
            page.wait_for("getComputedStyle(document.getElementById('preview')).display === 'block'"
                          " && document.getElementById('preview').naturalWidth > 0",
                          "the camera's live picture (GET /camera, MJPEG) is shown")
            slow = abuse(url)
            box = page.evaluate("(() => { const r = document.getElementById('control').getBoundingClientRect();"
                                " return {x: r.x, y: r.y, width: r.width, height: r.height}; })()")
            x, y = box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.5
            # Press the virtual control: down, drag 120 px down (force 150 + 30 mN/px → 3750 mN), hold, up.
            page.mouse("mouseMoved", x, y, 0)
            page.mouse("mousePressed", x, y, 1)
            for step in range(1, 13):
                time.sleep(0.06)
                page.mouse("mouseMoved", x, y + step * 10, 1)
            time.sleep(0.3)
            page.mouse("mouseReleased", x, y + 120, 0)
            page.wait_for("[...document.querySelectorAll('#events li.capture')].some(li =>"
                          " /ended primary camera-control .*CAPTURE/.test(li.textContent))",
                          "a capture event from the virtual control is listed")
            # A light press held (drag 30 px: 1050 mN): the overlay shows while the screenshot is taken.
            page.mouse("mousePressed", x, y, 1)
            for step in range(1, 4):
                time.sleep(0.06)
                page.mouse("mouseMoved", x, y + step * 10, 1)
            page.wait_for("document.getElementById('overlay').dataset.visible === 'true'", "the overlay appears on a light press")
            time.sleep(0.3)
            shot = page.call("Page.captureScreenshot", format="png")
            page.mouse("mouseReleased", x, y + 30, 0)
            data = base64.b64decode(shot["data"])
            scale = page.evaluate("window.devicePixelRatio") or 1
            image = png_pixels(data)
            for name in ("trace", "overlay", "preview"):
                rect = page.evaluate("(() => { const r = document.getElementById('%s').getBoundingClientRect();"
                                     " return {x: r.x, y: r.y, width: r.width, height: r.height}; })()" % name)
                fraction = drawn_fraction(image, rect, scale)
                if fraction < 0.002:
                    fail("nothing drawn in the %s canvas of the screenshot (%.4f of its pixels)" % (name, fraction))
                print("page_check: %s canvas: %.1f%% of its pixels drawn" % (name, fraction * 100))
            if out:
                with open(out, "wb") as f:
                    f.write(data)
            print("page_check: ok (%s)" % page.evaluate("document.querySelector('#events li.capture').textContent"))
            for sock in slow:
                sock.close()
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()


if __name__ == "__main__":
    main()

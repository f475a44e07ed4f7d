"""A small Chrome DevTools Protocol client over Chromium's --remote-debugging-pipe.

Enough to load a page in a real headless Chromium, click, read the DOM and take a screenshot,
with nothing but the standard library and the system's Chromium: no driver binary, no Python
package, and no browser download. Chromium reads commands from fd 3 and writes replies and
events to fd 4, each a JSON message ended by a NUL byte.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

CANDIDATES = ("chromium", "chromium-browser")  # Debian's package, found on the PATH
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--no-first-run", "--no-default-browser-check", "--remote-debugging-pipe", "--window-size=1280,900")


def find_chromium() -> str | None:
    """The system's Chromium, or None."""
    for candidate in CANDIDATES:
        found = shutil.which(candidate)
        if found:
            return found
    return None


class Chromium:
    """One headless Chromium with one page: `open(url)`, `evaluate(js)`, `click(selector)`."""

    def __init__(self, executable: str, profile: Path, timeout: float = 30.0) -> None:
        self.timeout = timeout
        to_browser_read, self._to_browser = os.pipe()
        self._from_browser, from_browser_write = os.pipe()

        def wire_pipes() -> None:  # in the child: the protocol's fds 3 and 4
            # Moved above 10 first, so neither dup2 overwrites the other's source.
            read_end = fcntl.fcntl(to_browser_read, fcntl.F_DUPFD, 10)
            write_end = fcntl.fcntl(from_browser_write, fcntl.F_DUPFD, 10)
            os.dup2(read_end, 3)
            os.dup2(write_end, 4)

        self.process = subprocess.Popen(
            [executable, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            preexec_fn=wire_pipes, pass_fds=(3, 4),  # close_fds runs after preexec_fn: keep 3 and 4
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        os.close(to_browser_read)
        os.close(from_browser_write)
        self._buffer = b""
        self._next_id = 0
        self.session: str | None = None

    def close(self) -> None:
        """Ask the browser to quit, and end the process if it does not."""
        with contextlib.suppress(OSError, RuntimeError, TimeoutError):
            self.send("Browser.close")
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- the protocol ---------------------------------------------------------------------------

    def send(self, method: str, session: bool = False, **params: Any) -> dict:
        """Send one command and wait for its reply (events in between are skipped)."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            reply = self._read_message()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
        raise TimeoutError(f"{method}: no reply in {self.timeout} s")

    def _read_message(self) -> dict:
        while b"\0" not in self._buffer:
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed the protocol pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    # --- a page ---------------------------------------------------------------------------------

    def open(self, url: str) -> None:
        """Open `url` in a new tab and wait until it has loaded."""
        target = self.send("Target.createTarget", url=url)["targetId"]
        self.session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        deadline = time.monotonic() + self.timeout
        loaded = f"location.href === {json.dumps(url)} && document.readyState === 'complete'"
        while not self.evaluate(loaded):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} did not finish loading")
            time.sleep(0.05)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page."""
        result = self.send("Runtime.evaluate", session=True, expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def click(self, selector: str) -> None:
        """A real mouse click (press and release) at the middle of the element."""
        box = self.evaluate(
            f"(() => {{ const r = document.querySelector({json.dumps(selector)}).getBoundingClientRect();"
            " return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", session=True, type=kind, x=box[0], y=box[1],
                      button="left", clickCount=1)

    def press(self, key: str) -> None:
        """A key press and release ('ArrowLeft', 'ArrowRight')."""
        codes = {"ArrowLeft": 37, "ArrowRight": 39}
        for kind in ("keyDown", "keyUp"):
            self.send("Input.dispatchKeyEvent", session=True, type=kind, key=key, code=key,
                      windowsVirtualKeyCode=codes[key])

    def screenshot(self) -> bytes:
        """A PNG of the visible page."""
        return base64.b64decode(self.send("Page.captureScreenshot", session=True, format="png")["data"])

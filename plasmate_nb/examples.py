"""Ready-made pieces for the notebooks and the README: an agent to watch.

Watching an agent needs an agent. ``ScriptedAgent`` is a small scripted one: its own MCP
client (the official SDK over streamable HTTP, in a thread with its own event loop, as an
external process would connect) that signs in on the bundled demo site through the
notebook's embedded server, one step at a time, so a dashboard on the same browser session
visibly moves while the notebook stays free.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import threading
from typing import TYPE_CHECKING, Any

from plasmate_nb.client.mcp import HttpTransport
from plasmate_nb.notebook.export import FinalTraceOmitted, TraceExport, load_trace
from plasmate_nb.notebook.page import Page

if TYPE_CHECKING:
    from plasmate_nb.demo_site import DemoSite
    from plasmate_nb.notebook.embedded_server import EmbeddedServer

__all__ = ["ScriptedAgent"]

WAIT_SECONDS = 60.0


class ScriptedAgent:
    """A scripted MCP agent that signs in on the demo site in the background, for watching live.

    It connects to ``server`` (``pnb.serve()``) as a second MCP client, opens a traced session
    on ``site``'s sign-in page (or, given ``session_id``, navigates that existing session
    there), then types an email and a password, picks a plan, ticks "Remember me", signs in and
    scrolls twice, pausing ``pause`` seconds between steps. It keeps its session open until
    ``close()``. The password is generated unless given; it goes only to the page (the trace
    keeps its byte length) and stays on the agent as ``password``, so a notebook can check that
    it shows nowhere; the agent's repr never shows it.

    >>> server = pnb.serve()
    >>> agent = pnb.examples.ScriptedAgent(server, site).start()
    >>> pnb.attach(agent.session_id).trace.dashboard()     # moves as the agent acts
    >>> agent.wait()
    >>> final = agent.close()                              # the final trace the agent received
    """

    #: The tools the agent calls after its session shows the sign-in page, in order.
    STEPS = ("type_text", "type_text", "select_option", "toggle", "click", "scroll", "scroll")

    def __init__(
        self,
        server: EmbeddedServer,
        site: DemoSite | str,
        *,
        session_id: str | None = None,
        email: str = "agent@example.test",
        password: str | None = None,
        pause: float = 0.3,
    ) -> None:
        self.email = email
        self.password = password if password is not None else secrets.token_urlsafe(16)
        self.pause = pause
        self._url, self._token = server.url, server.token
        base = site.base_url if hasattr(site, "base_url") else str(site).rstrip("/")
        self._start_url = f"{base}/login.html"
        self._session_id = session_id
        self._joined = session_id is not None
        self._steps_taken = 0
        self._final: dict[str, Any] | None = None
        self._error: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._go: asyncio.Event | None = None
        self._finish: asyncio.Event | None = None
        self._opened = threading.Event()
        self._acted = threading.Event()
        self._ended = threading.Event()
        self._thread: threading.Thread | None = None

    # -- state ----------------------------------------------------------------------------

    @property
    def session_id(self) -> str | None:
        """The browser session the agent drives; None until ``open()`` (or ``start()``) returns.

        >>> pnb.attach(agent.session_id)
        """
        return self._session_id

    @property
    def steps_taken(self) -> int:
        """How many of ``STEPS`` the agent has taken so far.

        >>> agent.steps_taken, len(agent.STEPS)
        """
        return self._steps_taken

    @property
    def done(self) -> bool:
        """True once the agent has taken every step (or stopped on an error ``wait()`` raises).

        >>> while not agent.done: ...
        """
        return self._acted.is_set()

    # -- control --------------------------------------------------------------------------

    def open(self, timeout: float = WAIT_SECONDS) -> ScriptedAgent:
        """Start the agent; it opens its session on the sign-in page and waits for ``start()``.

        Returns the agent once its ``session_id`` is known, so a dashboard can be attached
        before the first step. Raises the agent's error if it could not open the page.

        >>> agent = pnb.examples.ScriptedAgent(server, site).open()
        >>> watch = pnb.attach(agent.session_id)
        """
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="scripted-agent", daemon=True)
            self._thread.start()
        self._wait_for(self._opened, timeout, "open its session")
        return self

    def start(self, timeout: float = WAIT_SECONDS) -> ScriptedAgent:
        """Let the agent take its steps in the background (opening its session first if needed).

        >>> agent = pnb.examples.ScriptedAgent(server, site).start()
        """
        self.open(timeout)
        self._signal(self._go)
        return self

    def wait(self, timeout: float = WAIT_SECONDS) -> ScriptedAgent:
        """Block until the agent has taken every step; raises its error if it failed.

        >>> agent.wait().steps_taken
        7
        """
        if self._thread is None:
            raise RuntimeError("the agent has not started: call start() first")
        self._wait_for(self._acted, timeout, "take its steps")
        return self

    def close(self, timeout: float = WAIT_SECONDS) -> TraceExport | FinalTraceOmitted | None:
        """Let the agent close its session (after its steps) and return the final trace it received.

        Given a ``session_id`` at construction, the agent leaves that session open and returns None.

        >>> final = agent.close()
        >>> final.events()["action"].tolist()[-1]
        'close_page'
        """
        if self._thread is None:
            raise RuntimeError("the agent has not started: call start() first")
        self._signal(self._go)
        self._signal(self._finish)
        self._wait_for(self._ended, timeout, "close its session")
        return load_trace(self._final) if self._final is not None else None

    def _signal(self, event: asyncio.Event | None) -> None:
        if self._loop is not None and event is not None:
            with contextlib.suppress(RuntimeError):  # the agent's loop has ended: nothing left to tell
                self._loop.call_soon_threadsafe(event.set)

    def _wait_for(self, event: threading.Event, timeout: float, what: str) -> None:
        if not event.wait(timeout):
            raise TimeoutError(f"the scripted agent did not {what} within {timeout:g} s")
        if self._error is not None:
            raise RuntimeError(f"the scripted agent stopped: {self._error}") from None

    # -- the agent's own thread and event loop ----------------------------------------------

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as error:  # handed to whoever waits: a thread has no one else to tell
            self._error = error
        finally:
            for event in (self._opened, self._acted, self._ended):
                event.set()

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._go, self._finish = asyncio.Event(), asyncio.Event()
        mcp = HttpTransport(self._url, token=self._token)
        try:
            if self._session_id is None:
                payload = await mcp.call("open_page", {"url": self._start_url, "trace": True})
                self._session_id = payload["session_id"]
            else:
                payload = await mcp.call(
                    "navigate_to", {"session_id": self._session_id, "url": self._start_url}
                )
            self._opened.set()
            await self._go.wait()
            for tool, arguments in zip(self.STEPS, self._arguments(Page(payload)), strict=True):
                await mcp.call(tool, {"session_id": self._session_id, **arguments})
                self._steps_taken += 1
                await asyncio.sleep(self.pause)
            self._acted.set()
            await self._finish.wait()
            if not self._joined:
                closed = await mcp.call("close_page", {"session_id": self._session_id})
                self._final = closed["final_trace"]
        finally:
            await mcp.aclose()

    def _arguments(self, page: Page) -> list[dict[str, Any]]:
        return [
            {"element_id": page.find(label="Email").id, "text": self.email},
            {"element_id": page.find(label="Password").id, "text": self.password},
            {"element_id": page.find(role="select", label="Plan").id, "value": "pro"},
            {"element_id": page.find(role="checkbox", label="Remember me").id},
            {"element_id": page.find(role="button", text="Sign in").id},
            {"direction": "down", "pixels": 0},
            {"direction": "down", "pixels": 0},
        ]

    def __repr__(self) -> str:  # never the password or the token
        state = "not started" if self._thread is None else f"step {self._steps_taken}/{len(self.STEPS)}"
        return f"ScriptedAgent(session_id={self._session_id!r}, {state})"

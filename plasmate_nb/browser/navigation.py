"""Loading a URL into a page, hearing what the egress gate said about it, and waiting
(bounded) for the page to settle."""

from __future__ import annotations

import asyncio
import contextlib

from playwright.async_api import Dialog, Page, Request, Response
from playwright.async_api import Error as PlaywrightError

from plasmate_nb.browser.egress import EgressGate, gate_answer
from plasmate_nb.browser.errors import ActionError
from plasmate_nb.browser.memory import RendererMemoryGuard, stopped_reason
from plasmate_nb.browser.messages import describe, is_timeout
from plasmate_nb.browser.policy import PolicyViolation, UrlPolicy
from plasmate_nb.errors import (
    BLOCKED_PREFIX,
    ErrorText,
    failed_to_fetch,
    http_error,
    navigation_failed,
    outbound_blocked,
    reduce_url,
    scheme_not_allowed,
)
from plasmate_nb.som import document_loaded, next_frame

TUNNEL_FAILED = "net::ERR_TUNNEL_CONNECTION_FAILED"
ABORTED = "net::ERR_ABORTED"
FAILED = "net::ERR_FAILED"  # Chromium's generic failure: what its error page stands for
# An error status with an empty body: Chromium shows its own error page and fails the navigation.
HTTP_STATUS_FAILED = "net::ERR_HTTP_RESPONSE_CODE_FAILURE"
STOP_SECONDS = 2.0  # how long a timed-out navigation's stop may take
NO_DOCUMENT_STATUSES = (204, 205)  # an answer to a navigation that leaves the page as it was


class NavigationWatch:
    """What happened to one page's top-level navigations since :meth:`reset`.

    A gate refusal of a plain-HTTP navigation arrives as a marked ``403`` response (Chromium
    would render it as a page); a refused tunnel (HTTPS) as a failed request, matched to the
    refusal the gate recorded for that host and port. Either becomes ``blocked``; a site's own
    HTTP error or an unreachable destination becomes ``failed``.
    """

    def __init__(self, page: Page, gate: EgressGate | None) -> None:
        self._gate = gate
        self._mark = 0
        self._urls: list[str] = []
        self._pending: set[Request] = set()
        self._answered = asyncio.Event()
        self._answered.set()
        self.blocked: str | None = None
        self.failed: str | None = None
        self.http_failed: str | None = None  # the site's own error status (``HTTP error <status>: …``)
        # A navigation the page started after a document came, then abandoned (a download, a 204):
        # Playwright then never reports that document's load (``stranded``).
        self.stranded = asyncio.Event()
        self._responses: list[Response] = []  # top-level, since reset, in arrival order
        self._abandoned: set[Request] = set()
        page.on("request", self._on_request)
        page.on("response", self._on_response)
        page.on("response", self._on_document)
        page.on("requestfailed", self._on_failed)

    def reset(self) -> None:
        """Forget everything: what happens from now on is the next commit's."""
        self._mark = self._gate.mark() if self._gate is not None else 0
        self._urls.clear()
        self.forget_pending()
        self.blocked = self.failed = self.http_failed = None
        self.stranded.clear()
        self._responses.clear()
        self._abandoned.clear()

    def forget_pending(self) -> None:
        """A navigation still unanswered from before is not this action's: forget it, so one
        that never answers cannot make every later action wait out its settle time. What the
        page's own navigations came to since the last commit (a refusal, a failure) is kept:
        the next commit must not take the page they left for its own."""
        self._pending.clear()
        self._answered.set()

    async def answered(self, timeout: float) -> None:
        """Wait (at most ``timeout`` seconds) until every top-level navigation request seen so far
        has its answer: a refusal by the gate can arrive after the page has drawn a frame."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(max(0.001, timeout)):
                await self._answered.wait()

    @property
    def quiet(self) -> bool:
        """No top-level navigation is waiting for its answer."""
        return self._answered.is_set()

    def _settled(self, request: Request) -> None:
        self._pending.discard(request)
        if not self._pending:
            self._answered.set()

    def verdict(self, response: Response | None = None) -> None:
        """Take ``response`` (a ``goto``'s answer) into account now, whatever the event order."""
        if response is not None:
            self._on_response(response)

    def _on_request(self, request: Request) -> None:
        if _top_level(request):
            self._urls.append(request.url)
            self._pending.add(request)
            self._answered.clear()

    def _on_response(self, response: Response) -> None:
        if not _top_level(response.request):
            return
        self._settled(response.request)
        kind, reason = gate_answer(response.url, response.headers, gated=self._gate is not None)
        if kind == "refused":
            self.blocked = reason.removeprefix(BLOCKED_PREFIX)
        elif kind == "unreachable":
            self.failed = self.failed or reason
        elif response.status >= 400:
            self.http_failed = http_error(response.status, reduce_url(response.url))
            self.failed = self.failed or self.http_failed

    def _on_document(self, response: Response) -> None:
        # Apart from _on_response: ``take`` hands that one goto's answer again, which may be older
        # than a document a later navigation brought.
        if _top_level(response.request):
            self._responses.append(response)
            if response.status in NO_DOCUMENT_STATUSES:
                self._abandon(response.request)

    def _abandon(self, request: Request) -> None:
        self._abandoned.add(request)
        if any(r.request not in self._abandoned for r in self._responses):
            self.stranded.set()

    def shown(self, url: str) -> Response | None:
        """The latest top-level response since :meth:`reset` that brought a document at ``url``
        (the page's URL: a fragment the response's lacks is the same document)."""
        for response in reversed(self._responses):
            if response.request not in self._abandoned and same_document(response.url, url):
                return response
        return None

    def _on_failed(self, request: Request) -> None:
        if not _top_level(request):
            return
        self._settled(request)
        failure = request.failure
        if failure == ABORTED:
            self._abandon(request)
        if failure == TUNNEL_FAILED:
            self._match_refusal([request.url])
        # A tunnel the gate could not open (HTTPS to an unreachable host, no refusal behind it), or
        # a navigation the browser refused itself (an unsafe port), never reaching the gate. An
        # aborted one is no failure: replaced by another navigation, a download, a 204, an
        # external scheme.
        if (
            self.blocked is None
            and failure is not None
            and failure.startswith("net::")
            and failure != ABORTED
        ):
            # An HTTP_STATUS_FAILED comes after its response, whose status ``failed`` already holds.
            self.failed = self.failed or failure

    def _match_refusal(self, urls: list[str]) -> None:
        if self._gate is None or self.blocked is not None:
            return
        for url in reversed(urls):
            refusal = self._gate.refusal_for(url, since=self._mark)
            if refusal is not None:
                self.blocked = refusal.reason
                return

    def refusal(self) -> str | None:
        """Why the page the navigations since :meth:`reset` left must not be taken: the gate's
        refusal of one (``Outbound URL blocked: …``), else one's failure (``net::…`` or ``HTTP
        error <status>: …``), else None. Asked after a settle, when a page's own navigation
        (a redirect after the load, a meta refresh, a script) may have gone somewhere."""
        blocked = self.blocked_when_failed() if self.failed == TUNNEL_FAILED else self.blocked
        return outbound_blocked(blocked) if blocked is not None else self.failed

    def blocked_when_failed(self) -> str | None:
        """For a navigation that *failed*: the refusal behind it, also when the failed tunnel's
        event has not arrived yet. Never asked after a success: a page whose own subresource was
        refused on the same origin did load."""
        self._match_refusal(self._urls)
        return self.blocked


def same_document(url: str, other: str) -> bool:
    """Whether two URLs name one document: they differ at most in their fragments."""
    return url.partition("#")[0] == other.partition("#")[0]


def off_the_web(url: str) -> ErrorText | None:
    """Why a page at ``url`` cannot be a session's page, or None for an http(s) page. A session
    keeps only those: its last good page must be one it can go back to. A page gets elsewhere with
    no request that could fail on the way: Chromium's error page (``about:srcdoc`` on top), its
    block page (``about:blank#blocked``), a ``blob:`` document."""
    scheme = url.partition(":")[0].lower()
    if scheme in ("http", "https"):
        return None
    if scheme == "chrome-error":
        return navigation_failed(FAILED)
    return navigation_failed(outbound_blocked(scheme_not_allowed(scheme)))


def _top_level(request: Request) -> bool:
    try:
        return request.is_navigation_request() and request.frame.parent_frame is None
    except PlaywrightError:  # a request of a frame being torn down
        return False


async def goto(
    page: Page,
    url: str,
    *,
    policy: UrlPolicy,
    watch: NavigationWatch,
    timeout: float,
    memory_guard: RendererMemoryGuard | None = None,
) -> Response | None:
    """Navigate, or raise ``Failed to fetch <origin/…>: <reason>`` (docs/contract.md#messages-the-engine-produces).
    Returns the main resource's final response (``None`` for a same-document navigation). A page
    ``memory_guard`` stopped says so (docs/contract.md#renderer-memory-bound)."""
    where = reduce_url(url)
    try:
        policy.check_form(url)
    except PolicyViolation as violation:
        raise ActionError(failed_to_fetch(where, outbound_blocked(str(violation)))) from None
    watch.reset()
    try:
        response = await _loaded(page, url, timeout, watch)
    except (PlaywrightError, TimeoutError) as error:
        if is_timeout(error):
            # Bounded: a renderer too busy to load (a script that never yields) may not answer.
            with contextlib.suppress(PlaywrightError, TimeoutError):
                async with asyncio.timeout(STOP_SECONDS):
                    await stop_loading(page)
        blocked = watch.blocked_when_failed()
        stopped = await stopped_reason(memory_guard, page)
        if stopped is not None:
            reason: str = navigation_failed(stopped)
        elif blocked:
            reason = outbound_blocked(blocked)
        elif HTTP_STATUS_FAILED in str(error) and watch.http_failed is not None:
            reason = watch.http_failed  # the site's answer, as for an error page with a body
        else:
            described = describe(error, timeout)
            reason = described if is_timeout(error) else navigation_failed(described)
        raise ActionError(failed_to_fetch(where, reason)) from None
    watch.verdict(response)
    blocked = watch.blocked
    if blocked is not None:
        raise ActionError(failed_to_fetch(where, outbound_blocked(blocked)))
    if watch.failed is not None and watch.failed.startswith("net::"):
        raise ActionError(failed_to_fetch(where, navigation_failed(watch.failed)))
    if response is not None and response.status >= 400:
        raise ActionError(failed_to_fetch(where, http_error(response.status, reduce_url(page.url))))
    return response


async def stop_loading(page: Page) -> None:
    """Stop ``page``'s navigation in progress (CDP ``Page.stopLoading``, on a session of its own
    that needs nothing from the renderer first): one that timed out must not land after the call
    that waited for it has failed (Playwright's timeout leaves it running)."""
    cdp = await page.context.new_cdp_session(page)
    try:
        await cdp.send("Page.stopLoading")
    finally:  # bounded on its own: it also runs when the caller's deadline cancelled the send
        with contextlib.suppress(PlaywrightError, TimeoutError):
            async with asyncio.timeout(STOP_SECONDS):
                await cdp.detach()


async def _loaded(page: Page, url: str, timeout: float, watch: NavigationWatch) -> Response | None:
    """``page.goto`` to the load event, or the document it brought once that has loaded, when a
    navigation the page then started was abandoned (a "your download starts now" page, a 204):
    Playwright never reports that document's load, and the goto would wait out its timeout."""
    going = asyncio.ensure_future(_goto_once_more_if_interrupted(page, url, timeout))
    stranded = asyncio.ensure_future(_stranded_document(page, watch))
    try:
        await asyncio.wait((going, stranded), return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (going, stranded):
            task.cancel()
        await asyncio.gather(going, stranded, return_exceptions=True)
    if going.done() and not going.cancelled():
        return going.result()
    return stranded.result()


async def _stranded_document(page: Page, watch: NavigationWatch) -> Response:
    """Never fails: when the document goes, or the page shows none of this navigation's, it waits
    for the next abandoned navigation (the goto decides meanwhile)."""
    while True:
        await watch.stranded.wait()
        with contextlib.suppress(PlaywrightError):
            await document_loaded(page)
            shown = watch.shown(page.url)
            if shown is not None:
                return shown
        watch.stranded.clear()


async def _goto_once_more_if_interrupted(page: Page, url: str, timeout: float):
    # A late error page from an earlier refused download or blocked request can cut into a
    # fresh navigation; one retry gets past it.
    try:
        return await page.goto(url, wait_until="load", timeout=timeout * 1000)
    except PlaywrightError as error:
        if "interrupted by another navigation" not in str(error):
            raise
    return await page.goto(url, wait_until="load", timeout=timeout * 1000)


async def settle(page: Page, timeout: float, watch: NavigationWatch | None = None) -> None:
    """Let the page finish what an action started: the load state (a navigation may have
    begun), then a frame and a task (``next_frame``, timed from the isolated world), then the
    answers to the navigations ``watch`` saw begin (another round when there were any). Never
    longer than ``timeout``; a page that does not settle in time is taken as it is."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    for _ in range(2):  # a second round when a navigation replaced the document mid-wait
        remaining = max(0.001, deadline - loop.time())
        with contextlib.suppress(PlaywrightError, TimeoutError):
            if watch is not None and watch.stranded.is_set():  # Playwright never reports this load
                async with asyncio.timeout(remaining):
                    await document_loaded(page)
            else:
                await page.wait_for_load_state("load", timeout=remaining * 1000)
        remaining = max(0.001, deadline - loop.time())
        try:
            # A navigation a script started reaches the browser (and so the watch) within the
            # frame, and what the page queued right after it has run by the task.
            async with asyncio.timeout(remaining):
                await next_frame(page)
        except (PlaywrightError, TimeoutError):
            if loop.time() >= deadline:
                return
            continue
        if watch is None or watch.quiet:
            return
        await watch.answered(deadline - loop.time())


async def answer_dialog(dialog: Dialog) -> None:
    """Every alert/confirm/prompt is dismissed: an unattended page must never wait on a human.
    "Leave site?" (``beforeunload``) is answered with leave: staying would abort every later
    navigation of the session."""
    with contextlib.suppress(PlaywrightError):
        if dialog.type == "beforeunload":
            await dialog.accept()
        else:
            await dialog.dismiss()

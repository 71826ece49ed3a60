"""Markdown as GitHub renders it (cmark-gfm, through the cmarkgfm package, with raw HTML let through as GitHub's own
renderer does before its sanitiser): text from a report shows as text in every Markdown view (report, merge and
fleet --markdown), never as a tag, an image, a link or an @mention."""

from __future__ import annotations

import html
import html.parser
import json
import re
from pathlib import Path

import cmarkgfm
import doctor
import pytest
from cmarkgfm.cmark import Options
from triage_docs import rocm_report, variant

from mhcdoctor.render.decision_text import render_decision
from mhcdoctor.render.markdown import render_markdown
from mhcdoctor.render.term import Style

PAYLOADS = [
    "<img src=x onerror=alert(1)>",
    "\\<img src=x onerror=alert(1)>",
    "`<img src=x onerror=alert(1)>`",
    "\\`<img src=x onerror=alert(1)>`",
    "`<img src=x onerror=alert(1)>``",
    "``<img src=x>` `",
    "</details><img src=x>",
    "</summary></details><script>alert(1)</script>",
    "![pixel](https://evil.example/p.png)",
    "[click](javascript:alert(1))",
    "&lt;img src=x&gt; <!-- comment --> <a href=x>a</a>",
    "cc @octocat and @github/security",
    "a | b || c",
]
# What our own Markdown makes: tables, lists, emphasis, code, folded <details>, the <sub> footer.
OURS = {"p", "strong", "em", "code", "pre", "table", "thead", "tbody", "tr", "th", "td", "ul", "li", "h2", "h3"}
OURS |= {"details", "summary", "sub", "br", "hr"}
_MENTION = re.compile(r"(?<![\w`])@[A-Za-z0-9]")


class _Seen(html.parser.HTMLParser):
    """The tags of the rendered page, and its text outside code and links (where GitHub looks for @mentions). A bare
    URL is a link on GitHub whatever we do (the autolink extension): one whose text is its address hides nothing."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.text: list[str] = []
        self.links: list[tuple[str | None, str]] = []  # (href, the text shown)
        self.in_code = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.links.append((dict(attrs).get("href"), ""))
        else:
            self.tags.append((tag, attrs))
        self.in_code += tag in ("code", "pre", "a")

    def handle_endtag(self, tag: str) -> None:
        self.in_code -= tag in ("code", "pre", "a")

    def handle_data(self, data: str) -> None:
        if self.links and self.in_code and self.links[-1][1] is not None and self.lasttag == "a":
            self.links[-1] = (self.links[-1][0], self.links[-1][1] + data)
        if not self.in_code:
            self.text.append(data)


def github(markdown: str) -> _Seen:
    seen = _Seen()
    seen.feed(cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE))
    return seen


def assert_inert(markdown: str) -> None:
    seen = github(markdown)
    live = [
        (tag, attrs) for tag, attrs in seen.tags if tag not in OURS or any(k not in ("class", "lang") for k, _ in attrs)
    ]
    assert not live, live
    assert all(href == text for href, text in seen.links), seen.links
    assert not _MENTION.findall(" ".join(seen.text)), [t for t in seen.text if _MENTION.search(t)]


def shown(markdown: str) -> str:
    """All the text a reader sees (code included), without spaces and word joiners."""
    text = html.unescape(re.sub(r"<[^>]*>", "", cmarkgfm.github_flavored_markdown_to_html(markdown)))
    return "".join(text.split()).replace("\u2060", "")


def test_the_renderer_used_here_makes_these_payloads_live_unescaped():
    """The test can fail: pasted as they are, the payloads are tags, images, links and mentions."""
    for payload in PAYLOADS[:1] + PAYLOADS[3:5] + PAYLOADS[8:10]:
        with pytest.raises(AssertionError):
            assert_inert(f"GPU: {payload}")
    with pytest.raises(AssertionError):
        assert_inert("cc @octocat")


FIELDS = [
    "facts.devices.0.name",
    "facts.aiter.version",
    "facts.torch.version",
    "host.os",
    "findings.0.title",
    "findings.0.detail",
    "findings.0.fix",
    "models.0.model.name",
]


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("payload", PAYLOADS, ids=range(len(PAYLOADS)))
def test_the_report_shows_a_payload_in_any_field_as_text(field: str, payload: str) -> None:
    doc = variant(rocm_report(), **{field: f"x {payload} y"})
    if field == "findings.0.fix":
        doc["findings"][0]["fix"] = f"pip install {payload}"  # a fix that is a command is shown as code
    markdown = render_markdown(doc, trace=lambda m: render_decision(m, Style()))  # type: ignore[arg-type]
    assert_inert(markdown)
    assert "".join(payload.split()).replace("`", "") in shown(markdown).replace("`", "")


def _fleet(tmp_path: Path, payload: str) -> Path:
    folder = tmp_path / "reports"
    folder.mkdir()
    good = rocm_report()
    odd = variant(good, **{"facts.aiter.version": payload, "findings.0.title": payload, "findings.0.fix": payload})
    odd["models"][0]["model"]["name"] = payload
    for i in range(3):
        (folder / f"node-{i}.json").write_text(json.dumps(odd if i == 1 else good))
    (folder / "node-9.json").write_text(payload)  # unreadable: its error is shown
    return folder


@pytest.mark.parametrize("payload", PAYLOADS, ids=range(len(PAYLOADS)))
def test_merge_markdown_shows_a_payload_from_a_report_as_text(tmp_path: Path, payload: str) -> None:
    done = doctor.run("merge", "--markdown", str(_fleet(tmp_path, payload)))
    assert done.returncode == 3, done.stderr
    assert_inert(done.stdout)

"""Text from a report made inert in the Markdown we print, as GitHub renders it (cmark-gfm, then its sanitiser and
its @mention filter): no HTML tag, image or link from the text, no mention of a user, nothing out of its table cell.

A report is written by a machine (GPU names, versions, paths, a package's METADATA), and merge and fleet show what
other machines sent: all of it is text to show. Tests render our Markdown with cmark-gfm (the cmarkgfm package).
"""

from __future__ import annotations

import html
import re

# Backslash-escaped in prose: what opens an HTML tag, an entity, emphasis, a link or image, a code span, a table cell
# or strikethrough; and the backslash itself (`\<img>` escaped only `<` would leave `\\<img>`: a live tag).
_PROSE = re.compile(r"([\\`*_\[\]<>&|~!])")
# GitHub links `@name` and `@org/team` where `@` starts a word; a word joiner after `@` keeps it text.
_MENTION = re.compile(r"(?<![A-Za-z0-9_`])@(?=[A-Za-z0-9])")
_JOIN = "\u2060"


def prose(text: str) -> str:
    """`text` as Markdown prose that renders as exactly this text; its `code spans` stay code (rewritten to be
    well-formed, so a stray backtick cannot turn the rest into HTML)."""
    # CommonMark's code spans: a run of backticks opens one, the next run of the same length closes it, a run with no
    # closer is literal. Each run's closer is found once (a regex with a backreference is quadratic on backticks).
    runs = [(m.start(), m.end()) for m in re.finditer(r"`+", text)]
    closer: dict[int, int] = {}
    last: dict[int, int] = {}
    for i in range(len(runs) - 1, -1, -1):
        length = runs[i][1] - runs[i][0]
        if length in last:
            closer[i] = last[length]
        last[length] = i
    out, pos, i = [], 0, 0
    while i < len(runs):
        j = closer.get(i)
        if j is None:
            i += 1
            continue
        content = text[runs[i][1] : runs[j][0]]
        out += [_escape(text[pos : runs[i][0]]), code(content.strip(" ") or content)]
        pos, i = runs[j][1], j + 1
    out.append(_escape(text[pos:]))
    return "".join(out)


def code(text: str) -> str:
    """`text` as one code span, whatever backticks it holds: fenced by a longer run than any inside."""
    text = text.replace("\r", " ").replace("\n", " ")
    fence = "`" * (1 + max((len(run) for run in re.findall(r"`+", text)), default=0))
    pad = " " if text[:1] in ("`", " ") or text[-1:] in ("`", " ") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def cell(markdown: str) -> str:
    """Markdown already made safe (`prose`, `code`) as one table cell: one line, `|` kept inside it."""
    return re.sub(r"(?<!\\)\|", r"\\|", markdown.replace("\r", " ").replace("\n", " "))


def html_text(text: str) -> str:
    """`text` inside an HTML block (a <summary> title), where Markdown escapes do not apply: entities instead."""
    return _MENTION.sub("@" + _JOIN, html.escape(text.replace("\n", " "), quote=True))


def _escape(text: str) -> str:
    return _MENTION.sub("@" + _JOIN, _PROSE.sub(r"\\\1", text.replace("\r", " ").replace("\n", " ")))

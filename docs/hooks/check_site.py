"""Check a built documentation site: the API reference renders as a reader sees it.

    python docs/hooks/check_site.py /tmp/sm-site        # after `mkdocs build --site-dir /tmp/sm-site`

Reports, page by page, and exits 1 if any of these is found:

- a raw Sphinx role (``:func:`x```, ``:class:`x``` ... shown as text instead of a cross-reference);
- a backtick or a doctest prompt ``>>>`` in prose (outside code): Markdown that did not render;
- a link (``href``) or an anchor (``id``) naming a private object (a path component of
  ``streammetrics.`` that starts with ``_``): the site documents and links the public API only;
- an unprocessed ``<autoref`` tag (a cross-reference autorefs never saw);
- a signature that is not a complete Python signature (cut, or with unbalanced brackets), or
  with a line too long for the content column (it would be cut off on screen);
- reStructuredText's literal-block marker ``::`` left at the end of a paragraph;
- a link of a page's content to a page or an anchor that the site does not have.

Standard library only, so CI runs it with whatever python built the site.
"""

from __future__ import annotations

import ast
import html
import os
import re
import sys
from html.parser import HTMLParser

RAW_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|attr|mod|data|obj|exc|const|type):(?:`|<code>)")
PRIVATE = re.compile(r"streammetrics\.(?:[A-Za-z0-9]\w*\.)*_")
PRIVATE_ATTR = re.compile(r'\b(href|id)="([^"]*)"')
SIGNATURE_WIDTH = 80  # characters of a signature line that fit the content column (mkdocs.yml: line_length)


class _Prose(HTMLParser):
    """Collects the text outside ``<code>``/``<pre>`` and the text of every signature block."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.code_depth = 0
        self.prose: list[str] = []
        self.signatures: list[str] = []
        self._sig_depth = 0  # > 0 inside a <div class="doc-signature ...">: counts nested divs
        self._sig: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("code", "pre"):
            self.code_depth += 1
        if tag == "div":
            classes = (dict(attrs).get("class") or "").split()
            if self._sig_depth:
                self._sig_depth += 1
            elif "doc-signature" in classes:
                self._sig_depth, self._sig = 1, []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("code", "pre"):
            self.code_depth = max(0, self.code_depth - 1)
        if tag == "div" and self._sig_depth:
            self._sig_depth -= 1
            if not self._sig_depth:
                self.signatures.append("".join(self._sig))

    def handle_data(self, data: str) -> None:
        if self._sig_depth:
            self._sig.append(data)
        elif not self.code_depth:
            self.prose.append(data)


def complete(signature: str) -> bool:
    """A function or class signature compiles as a ``def``; an attribute as an assignment."""
    text = signature.strip()
    head = re.match(r"[A-Za-z_]\w*", text)
    if head is None:
        return False
    rest = text[head.end():].lstrip()
    try:
        if rest.startswith("("):
            ast.parse(f"def {head.group(0)}{rest}:\n    pass\n")
        else:
            ast.parse(text)
    except SyntaxError:
        return False
    return True


def check_page(text: str) -> list[str]:
    """The problems of one built HTML page, one line each."""
    problems = []
    for attr, value in PRIVATE_ATTR.findall(text):  # the whole page: the tables of contents too
        if PRIVATE.search(html.unescape(value)):
            problems.append(f"private {attr}: {value}")
    start = text.find("<article")  # the page's own content, not the navigation
    body = text[start:] if start >= 0 else text
    problems += [f"raw role: {m.group(0)}" for m in RAW_ROLE.finditer(body)]
    if "<autoref" in body:
        problems.append("unprocessed <autoref> tag")
    parser = _Prose()
    parser.feed(body)
    prose = "".join(parser.prose)
    for line in prose.splitlines():
        if "`" in line:
            problems.append(f"backtick in prose: {line.strip()[:120]}")
        if ">>>" in line:
            problems.append(f"doctest prompt in prose: {line.strip()[:120]}")
        if line.rstrip().endswith("::"):
            problems.append(f"reStructuredText literal marker in prose: {line.strip()[-120:]}")
    for sig in parser.signatures:
        if not complete(sig):
            problems.append(f"incomplete signature: {' '.join(sig.split())[:160]}")
        elif any(len(line) > SIGNATURE_WIDTH for line in sig.splitlines()):
            problems.append(f"signature line over {SIGNATURE_WIDTH} characters (runs off the column): "
                            f"{max(sig.splitlines(), key=len)[:160]}")
    return problems


HREF = re.compile(r'<a\b[^>]*\bhref="([^"]*)"')
ID = re.compile(r'\bid="([^"]*)"')


def broken_links(site: str, pages: dict[str, str]) -> dict[str, list[str]]:
    """Links of the pages' content to a page or an anchor the site does not have.

    mkdocs validates the links of the Markdown pages; this also covers the HTML of the API
    reference (docstrings rendered by mkdocstrings), whose links mkdocs never sees.
    """
    ids = {page: set(ID.findall(text)) for page, text in pages.items()}
    found: dict[str, list[str]] = {}
    for page, text in pages.items():
        start = text.find("<article")
        for href in HREF.findall(text[start:] if start >= 0 else text):
            href = html.unescape(href)
            if re.match(r"[a-z][a-z0-9+.-]*:", href) or href.startswith("//"):
                continue  # another site
            path, _, anchor = href.partition("#")
            if path:
                target = os.path.normpath(os.path.join(os.path.dirname(page), path))
                if os.path.isdir(os.path.join(site, target)) or path.endswith("/"):
                    target = os.path.join(target, "index.html")
            else:
                target = page
            if target not in pages and not os.path.isfile(os.path.join(site, target)):
                found.setdefault(page, []).append(f"broken link: {href}")
            elif anchor and target in ids and anchor not in ids[target]:
                found.setdefault(page, []).append(f"broken anchor: {href}")
    return found


def check_site(site: str) -> dict[str, list[str]]:
    """``{page: problems}`` for every HTML page of the site with a problem."""
    pages: dict[str, str] = {}
    for dirpath, _, files in os.walk(site):
        for name in files:
            if name.endswith(".html"):
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8") as fh:
                    pages[os.path.relpath(path, site)] = fh.read()
    found: dict[str, list[str]] = {}
    for page, text in pages.items():
        problems = check_page(text)
        if problems:
            found[page] = problems
    for page, problems in broken_links(site, pages).items():
        found.setdefault(page, []).extend(problems)
    return found


def main(argv: list[str]) -> int:
    site = argv[0] if argv else "site"
    found = check_site(site)
    for page, problems in sorted(found.items()):
        for problem in problems:
            print(f"{page}: {problem}")
    total = sum(map(len, found.values()))
    print(f"check_site: {total} problem(s) in {len(found)} page(s) of {site}", file=sys.stderr)
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

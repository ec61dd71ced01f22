#!/usr/bin/env python3
"""Checks that the links users follow from the README and the manual resolve.

- Links into this repository (https://github.com/rpc-runtime/rpc-runtime/blob/main/PATH
  and .../tree/main/PATH) must name a file or folder that exists here.
- Links to docs.rs (https://docs.rs/rpc-runtime/latest/rpc_runtime/...) must name a
  page that `cargo doc` built in target/doc, and an anchor (#...) must be an id
  on that page.
- Relative links are refused in the README: it is packaged into the crate and
  shown on crates.io, where a relative path does not resolve.

Run after `cargo doc -p rpc-runtime --all-features --no-deps`. Standard library only.
"""

import html.parser
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOC = ROOT / "target" / "doc"
REPO = "https://github.com/rpc-runtime/rpc-runtime/"
DOCS_RS = "https://docs.rs/rpc-runtime/latest/"

# The files whose links are checked: the README, the pages of the manual and
# the other documents a user reads.
SOURCES = [
    ROOT / "README.md",
    ROOT / "CHANGELOG.md",
    ROOT / "SECURITY.md",
    ROOT / "CONTRIBUTING.md",
    ROOT / "examples" / "README.md",
    ROOT / "rpc-macros" / "README.md",
    *sorted((ROOT / "rpc-runtime" / "docs").glob("*.md")),
    *sorted((ROOT / "rpc-runtime" / "src").rglob("*.rs")),
]

LINK = re.compile(r"\]\(([^)\s]+)\)|<(https?://[^>\s]+)>|(https?://[^\s)>\]`\"']+)")


class Ids(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("id", "name") and value:
                self.ids.add(value)


_ids_cache = {}


def ids_of(page):
    if page not in _ids_cache:
        parser = Ids()
        parser.feed(page.read_text(encoding="utf-8"))
        _ids_cache[page] = parser.ids
    return _ids_cache[page]


def github_anchors(path):
    """The anchors GitHub gives a markdown file's headings."""
    anchors = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        heading = re.match(r"#+\s+(.*)", line)
        if heading:
            text = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower())
            anchors.add(text.replace(" ", "-"))
    return anchors


def check(url, source):
    """Returns a problem with the link, or None."""
    url = url.rstrip(".,;:")
    if url.startswith(REPO):
        rest = url[len(REPO):]
        match = re.match(r"(?:blob|tree)/main/([^#?]*)", rest)
        if rest in ("", "/") or rest.startswith(("security/advisories", "commits/", "compare/", "releases")):
            return None
        if not match:
            return f"a repository link not of the form blob/main/PATH: {url}"
        path = ROOT / match.group(1)
        if not path.exists():
            return f"no such file in the repository: {match.group(1)}"
        anchor = url.partition("#")[2]
        if anchor and path.suffix == ".md" and anchor not in github_anchors(path):
            return f"no heading for #{anchor} in {match.group(1)}"
        return None
    if url.startswith(DOCS_RS):
        rest = url[len(DOCS_RS):]
        path, _, anchor = rest.partition("#")
        if path.endswith("/") or path == "":
            path += "index.html"
        page = DOC / path
        if not page.exists():
            return f"docs.rs page not built by cargo doc: {path}"
        if anchor and anchor not in ids_of(page):
            return f"no anchor #{anchor} on {path}"
        return None
    if url.startswith("https://docs.rs/rpc-runtime") or url.startswith("https://docs.rs/rpc-macros"):
        return None  # the crate's front page, any version
    if source.name == "README.md" and source.parent == ROOT and not re.match(r"[a-z]+:", url) and not url.startswith("#"):
        return f"a relative link in the packaged README (use an absolute URL): {url}"
    return None


def main():
    if not (DOC / "rpc_runtime" / "index.html").exists():
        sys.exit("check_links: run `cargo doc -p rpc-runtime --all-features --no-deps` first")
    problems = []
    checked = 0
    for source in SOURCES:
        if not source.exists():
            continue
        for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1):
            for groups in LINK.findall(line):
                url = next(group for group in groups if group)
                checked += 1
                problem = check(url, source)
                if problem:
                    problems.append(f"{source.relative_to(ROOT)}:{number}: {problem}")
    for problem in problems:
        print(problem)
    print(f"check_links: {checked} links checked, {len(problems)} broken")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()

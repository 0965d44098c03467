"""docs/deploy.md against deploy/: every file mentioned, every deploy/ path named exists."""
import os
import re

from .report import DEPLOY, ROOT, fail, ok, read, rel


def check_docs():
    doc = os.path.join(ROOT, "docs", "deploy.md")
    if not os.path.exists(doc):
        fail("docs/deploy.md is missing")
        return
    text = read(doc)
    missing = []
    for dirpath, _, names in os.walk(DEPLOY):
        for n in names:
            r = rel(os.path.join(dirpath, n))
            if r not in text and n not in text:
                missing.append(r)
    if missing:
        fail(f"docs/deploy.md does not mention {sorted(missing)}")
    # Every deploy/... path named in the docs or the files' comments exists.
    sources = [doc] + [os.path.join(dp, n) for dp, _, ns in os.walk(DEPLOY) for n in ns]
    broken = set()
    for s in sources:
        text = read(s)
        for m in re.finditer(r"(?<![\w/.-])(deploy/[A-Za-z0-9_./@{},-]*[A-Za-z0-9_@}])", text):
            p = m.group(1)
            line = text[text.rfind("\n", 0, m.start()) + 1: text.find("\n", m.end())]
            if "kubectl" in line and re.fullmatch(r"deploy/[a-z0-9-]+", p) and not os.path.exists(os.path.join(ROOT, p)):
                continue  # kubectl's deploy/NAME (a Deployment), not a path
            b = re.search(r"\{([^}]*)\}", p)
            paths = [p[: b.start()] + alt + p[b.end():] for alt in b.group(1).split(",")] if b else [p]
            for q in paths:
                if not os.path.exists(os.path.join(ROOT, q)):
                    broken.add(f"{rel(s)}: {q}")
    for b in sorted(broken):
        fail(f"names a path that does not exist: {b}")
    ok("docs/deploy.md mentions every file of deploy/, and every deploy/ path named anywhere exists")

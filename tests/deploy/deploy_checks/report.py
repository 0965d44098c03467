"""Reporting: one line per check ("ok   ...", "FAIL ...", "skip ...", "note ..."), the
failure count, and the repository's paths."""
import os

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
DEPLOY = os.path.join(ROOT, "deploy")

failures = 0


def ok(msg):
    print("ok   " + msg)


def fail(msg):
    global failures
    failures += 1
    print("FAIL " + msg)


def skip(msg):
    print("skip " + msg)


def note(msg):
    print("note " + msg)


def rel(path):
    return os.path.relpath(path, ROOT)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()

#!/usr/bin/env python3
"""engine-core's structure check (issue 26, point 3).

Reads every file of engine-core/src, outside its test modules (a `#[cfg(test)] mod` and what
follows it, and files named `tests.rs`), and reports:

- circles between top-level modules (`engine`, `concerns`, `io`, ...): a file of module A that
  names `crate::B::...` (or reaches B through `super::`, or through a name lib.rs re-exports
  from B) makes A use B; a strongly connected set of two or more modules is a circle. One
  sub-module counts as a module of its own, `trace::replay`: the design
  (../shared/design/concerns.md) places the trace format and recorder below the engine and the
  replay above it, driving the engine by its public API. `trace` only re-exports the replay's
  names for the public path (`pub use replay::...`, a path the check does not follow);
- production files over 800 lines (a file's `#[cfg(test)]` module and everything after it do
  not count);
- reads of the source kind outside `backend/`: `inputs.source`, and a choice made on whether
  the local Agent's parts exist (`backend.local.is_some()` / `is_none()`), which is the same
  flag read through the type.

Each finding must be in the allow-list, `tools/structure-allow.txt` (one finding per line, as
printed; `#` starts a comment), else the check fails. While issue 26 reshapes engine-core the
list holds what is left to remove, and an entry may only shrink: a circle whose modules are a
subset of a listed circle's, a file or a count no larger than listed. A listed entry that no
longer states a finding exactly (it is gone, or smaller) fails the check too, so the list
follows the code down (`--update` rewrites it). The issue is done when the list is empty.

Usage: python3 tools/structure-check.py [--update] [--verbose]
"""

import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SRC = os.path.join(ROOT, "engine-core", "src")
ALLOW = os.path.join(ROOT, "tools", "structure-allow.txt")
MAX_LINES = 800

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"

# Sub-modules that are modules of their own for the circle check (see the docstring).
OWN_NODES = [("trace", "replay")]


def node(path):
    """The module a module path belongs to: its top-level module, or an OWN_NODES entry."""
    for own in OWN_NODES:
        if tuple(path[: len(own)]) == own:
            return "::".join(own)
    return path[0]


def rust_files():
    """engine-core's source files, but for test modules of their own (`tests.rs`)."""
    for dirpath, _, names in os.walk(SRC):
        for name in sorted(names):
            if name.endswith(".rs") and name != "tests.rs":
                yield os.path.join(dirpath, name)


def module_path(path):
    """The module path of a file: src/engine/sending.rs -> ['engine', 'sending']."""
    rel = os.path.relpath(path, SRC)[: -len(".rs")].split(os.sep)
    if rel[-1] in ("mod", "lib"):
        rel = rel[:-1]
    return rel


def production(text):
    """The file's text up to its test module, comments removed (line count kept)."""
    lines = text.split("\n")
    end = len(lines)
    dropped = set()
    attributes = r"(?:#\[(?:[^\[\]]|\[[^\]]*\])*\]\s*)*"
    for i, line in enumerate(lines):
        if line.strip() == "#[cfg(test)]":
            rest = "\n".join(lines[i + 1 :])
            m = re.match(r"\A\s*" + attributes + r"(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*([;{])", rest)
            if not m:
                continue
            if m.group(1) == ";":
                # `mod tests;`: only the declaration (its file is skipped on its own).
                dropped.update(range(i, i + 1 + rest[: m.end()].count("\n") + 1))
                continue
            end = i  # an inline test module: the file's last item, by convention
            break
    kept = []
    for n, line in enumerate(lines[:end]):
        if n in dropped:
            continue
        # Comments (doc links name paths that are no dependency); strings are left alone.
        kept.append(re.sub(r"//.*$", "", line))
    return kept


def reexports(lib_lines):
    """Names lib.rs re-exports, and the top-level module each comes from."""
    names = {}
    text = "\n".join(lib_lines)
    for m in re.finditer(r"pub use (?:crate::)?(" + IDENT + r")::([^;]*);", text, re.S):
        module, rest = m.group(1), m.group(2)
        for name in re.findall(IDENT, rest.split("::")[-1] if "{" not in rest else rest):
            names.setdefault(name, module)
    return names


def brace_items(text, start):
    """The top-level items of the `{...}` group opening at text[start]."""
    depth, item, items = 0, "", []
    for ch in text[start:]:
        if ch == "{":
            depth += 1
            if depth == 1:
                continue
        elif ch == "}":
            depth -= 1
            if depth == 0:
                items.append(item)
                break
        if depth == 1 and ch == ",":
            items.append(item)
            item = ""
        else:
            item += ch
    return [i.strip() for i in items if i.strip()]


def targets(lines, modpath, modules, names):
    """(top-level module, line number) for every path of this file that leaves its module."""
    text = "\n".join(lines)
    found = []

    def line_of(pos):
        return text.count("\n", 0, pos) + 1

    def resolve(first, pos, rest=""):
        if first in modules:
            found.append((node([first] + re.findall(IDENT, rest.split("{")[0])), line_of(pos)))
        elif first in names:
            found.append((names[first], line_of(pos)))

    for m in re.finditer(r"\bcrate::(\{|" + IDENT + ")((?:::" + IDENT + ")*)", text):
        if m.group(1) == "{":
            for item in brace_items(text, m.start(1)):
                first = re.match(IDENT, item)
                resolve(first.group(0) if first else "", m.start(), item[first.end():] if first else "")
        else:
            resolve(m.group(1), m.start(), m.group(2))
    for m in re.finditer(r"\b((?:super::)+)(\{|" + IDENT + ")", text):
        ups = m.group(1).count("super::")
        base = modpath[: max(len(modpath) - ups, 0)]
        if base:
            found.append((node(base), line_of(m.start())))
            continue
        # `super::` up to the crate root: the next segment names the module.
        if m.group(2) == "{":
            for item in brace_items(text, m.start(2)):
                first = re.match(IDENT, item)
                if first:
                    resolve(first.group(0), m.start())
        else:
            resolve(m.group(2), m.start())
    return found


def circles(edges):
    """Strongly connected sets of two or more modules (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    graph = {}
    for (a, b) in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc = []
            while True:
                w = stack.pop()
                on.discard(w)
                scc.append(w)
                if w == v:
                    break
            if len(scc) > 1:
                out.append(sorted(scc))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def findings(verbose):
    files = list(rust_files())
    modules = {module_path(f)[0] for f in files if module_path(f)}
    lib = production(open(os.path.join(SRC, "lib.rs"), encoding="utf-8").read())
    names = reexports(lib)
    edges = {}
    out = []
    for path in sorted(files):
        rel = os.path.relpath(path, os.path.join(ROOT, "engine-core"))
        modpath = module_path(path)
        lines = production(open(path, encoding="utf-8").read())
        if len(lines) > MAX_LINES:
            out.append(("long", rel, len(lines)))
        text = "\n".join(lines)
        reads = len(re.findall(r"\binputs\s*\.\s*source\b", text))
        reads += len(re.findall(r"\bbackend\s*\.\s*local\s*\.\s*is_(?:some|none)\b", text))
        if reads and not rel.startswith("src/backend/"):
            out.append(("source", rel, reads))
        if not modpath:
            continue
        for target, line in targets(lines, modpath, modules, names):
            if target != node(modpath):
                edges.setdefault((node(modpath), target), []).append(f"{rel}:{line}")
    for scc in circles(edges):
        out.append(("circle", " ".join(scc), None))
        if verbose:
            for (a, b), where in sorted(edges.items()):
                if a in scc and b in scc:
                    print(f"  {a} -> {b}: {', '.join(where[:4])}{' ...' if len(where) > 4 else ''}")
    return sorted(out, key=render)


def render(f):
    kind, what, n = f
    if kind == "circle":
        return f"circle: {what}"
    if kind == "long":
        return f"long: {what} {n} lines"
    return f"source: {what} {n} reads"


def parse_allow():
    allowed = []
    if not os.path.exists(ALLOW):
        return allowed
    for line in open(ALLOW, encoding="utf-8"):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        kind, rest = line.split(":", 1)
        rest = rest.strip()
        if kind == "circle":
            allowed.append(("circle", set(rest.split()), None))
        else:
            what, n, _ = rest.rsplit(" ", 2)
            allowed.append((kind, what, int(n)))
    return allowed


def covers(allow, f, exactly=False):
    """Whether allow-list entry `allow` permits finding `f` (`exactly`: states it as it is)."""
    kind, what, n = f
    if allow[0] != kind:
        return False
    if kind == "circle":
        found = set(what.split())
        return found == allow[1] if exactly else found <= allow[1]
    return allow[1] == what and (n == allow[2] if exactly else n <= allow[2])


def main():
    update = "--update" in sys.argv
    verbose = "--verbose" in sys.argv
    found = findings(verbose)
    if update:
        with open(ALLOW, "w", encoding="utf-8") as out:
            out.write(
                "# engine-core's structure findings still allowed (tools/structure-check.py).\n"
                "# Issue 26 removes them; an entry may only shrink. Empty: done.\n"
            )
            for f in found:
                out.write(render(f) + "\n")
        print(f"structure: {len(found)} findings written to {os.path.relpath(ALLOW, ROOT)}")
        return 0
    allowed = parse_allow()
    bad = [f for f in found if not any(covers(a, f) for a in allowed)]
    # An entry that no longer states a finding exactly (gone, or smaller) must follow the code.
    stale = [a for a in allowed if not any(covers(a, f, exactly=True) for f in found)]
    for f in found:
        print(("  " if f not in bad else "! ") + render(f))
    for a in stale:
        kind, what, n = a
        shown = " ".join(sorted(what)) if kind == "circle" else f"{what} {n}"
        print(f"- {kind}: {shown}: gone or smaller; update the allow-list (--update)")
    circles_n = sum(1 for f in found if f[0] == "circle")
    long_n = sum(1 for f in found if f[0] == "long")
    reads = sum(f[2] for f in found if f[0] == "source")
    print(
        f"structure: {circles_n} circles, {long_n} files over {MAX_LINES} lines, "
        f"{reads} source reads outside backend/; {len(bad)} not allowed, {len(stale)} stale"
    )
    return 1 if bad or stale else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The code's shape, measured over the product sources (daemon/, reorder/, lib/), from their text alone.

  lengths   functions longer than --max-lines (default 100), signature to closing brace
  circles   circles inside a folder: a graph of its modules (foo.c + foo.h is module foo; a header without a .c is
            one of its own), an arrow A -> B when a file of A #includes B's header or calls (names) a function
            B's .c defines; each strongly connected component of more than one module is a circle: a file that
            calls back into the one that calls it, or needs types from the header of one that depends on it
  returns   bare `return -1;` (an errno's value: the error domain, lib/error.h, has its own codes)

usage: code_check.py [--max-lines N] [--allow FILE] [--report] [TOP]
Prints one line per finding ("FILE:LINE: ..." or "circle in DIR: a -> b -> a") and exits 1 when there is one.
--allow FILE: the known exceptions not fixed yet (tests/code_check.allow); each must still be there (a fixed one
is taken off the list), nothing may be added without listing it.  --report prints the counts and every finding
not allowed, and exits 0 (for measuring).  Kernel style is assumed: a function
body opens with "{" in column 0 on the line after its signature and closes with "}" in column 0."""
import os
import re
import sys

FOLDERS = ("daemon", "reorder", "lib")
DEF_RE = re.compile(r"^(?!static\b)[A-Za-z_][\w \t\*]*?\b([A-Za-z_]\w*)\s*\(")
CALL_RE = re.compile(r"\b([A-Za-z_]\w*)\b")
INC_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
COMMENT_RE = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
STRING_RE = re.compile(r'"(?:\\.|[^"\\])*"')


def sources(top):
    for folder in FOLDERS:
        for root, dirs, files in os.walk(os.path.join(top, folder)):
            dirs.sort()
            for f in sorted(files):
                if f.endswith((".c", ".h")):
                    yield os.path.join(root, f)


def functions(text):
    """(name, first line, last line, static) of each function definition."""
    lines = text.split("\n")
    out = []
    i = 0
    while i < len(lines):
        if lines[i] == "{" and i > 0:
            # the signature: back to the line that starts in column 0 with a type
            s = i - 1
            while s > 0 and (lines[s][:1] in (" ", "\t") or lines[s] == ""):
                s -= 1
            sig = " ".join(l.strip() for l in lines[s:i])
            m = re.search(r"\b([A-Za-z_]\w*)\s*\(", sig)
            e = i + 1
            while e < len(lines) and lines[e] != "}":
                e += 1
            if m and not sig.startswith(("struct ", "enum ", "union ", "typedef ")) or (m and "(" in sig and ")" in sig):
                out.append((m.group(1), s + 1, e + 1, sig.startswith("static")))
            i = e
        i += 1
    return out


def lengths(top, max_lines):
    found = []
    for path in sources(top):
        if not path.endswith(".c"):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for name, first, last, _ in functions(text):
            n = last - first + 1
            if n > max_lines:
                found.append((os.path.relpath(path, top), first, name, n))
    return found


def bare_returns(top):
    """(path, function, line) of each `return -1;`."""
    found = []
    for path in sources(top):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        fns = functions(text)
        for no, line in enumerate(text.split("\n"), 1):
            if re.search(r"\breturn\s+-1\s*;", line):
                name = next((n for n, a, b, _ in fns if a <= no <= b), "?")
                found.append((os.path.relpath(path, top), name, no))
    return found


TAG_RE = re.compile(r"\b(?:struct|enum|union)\s+\w+")


def strip(text):
    """Code without comments, strings and struct/enum/union tags (a tag may share a function's name)."""
    return TAG_RE.sub(" ", STRING_RE.sub('""', COMMENT_RE.sub(" ", text)))


def folder_graph(folder):
    """Modules of one folder and their arrows.  A module is foo.c with its header foo.h (a header without a .c is
    a module of its own: shared types).  A -> B when a file of A #includes B's header (it needs B's types or
    interface) or A's .c names a function B's .c defines (not static)."""
    files = sorted(f for f in os.listdir(folder) if f.endswith((".c", ".h")))
    mod = {f: f[:-2] for f in files}
    texts = {}
    for f in files:
        with open(os.path.join(folder, f), encoding="utf-8", errors="replace") as h:
            texts[f] = h.read()
    defined = {}  # function name -> module whose .c defines it (not static)
    for f in files:
        if f.endswith(".c"):
            for name, _, _, static in functions(texts[f]):
                if not static and name != "main" and not name.startswith("__"):
                    defined[name] = mod[f]
    arrows = {m: set() for m in mod.values()}
    for f in files:
        a = mod[f]
        for inc in INC_RE.findall(texts[f]):
            if inc in mod and mod[inc] != a:
                arrows[a].add(mod[inc])
        if f.endswith(".c"):
            for tok in set(CALL_RE.findall(strip(texts[f]))):
                b = defined.get(tok)
                if b and b != a:
                    arrows[a].add(b)
    return arrows


def sccs(graph):
    """Tarjan's strongly connected components."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

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
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def cycle_in(graph, comp):
    """One circle through the component, as a path a -> ... -> a."""
    comp = set(comp)
    start = min(comp)
    prev = {start: None}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph[v]):
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w in comp and w not in prev:
                prev[w] = v
                queue.append(w)
    return sorted(comp)


def circles(top):
    found = []
    for folder in FOLDERS:
        for root, dirs, files in os.walk(os.path.join(top, folder)):
            dirs.sort()
            if not any(f.endswith(".c") for f in files):
                continue
            g = folder_graph(root)
            for comp in sccs(g):
                if len(comp) > 1:
                    found.append((os.path.relpath(root, top), len(comp), cycle_in(g, comp)))
    return found


def read_allow(path):
    """The known exceptions, one a line: "length FILE FUNCTION", "return FILE FUNCTION COUNT",
    "circle FOLDER"; '#' starts a comment."""
    allow = {}
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            words = line.split("#", 1)[0].split()
            if words:
                allow[tuple(words[:3]) if words[0] != "circle" else ("circle", words[1])] = (
                    int(words[3]) if words[0] == "return" else 1, no)
    return allow


def main(argv):
    max_lines, report, top, allow_path = 100, False, None, None
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--max-lines":
            max_lines = int(args.pop(0))
        elif a == "--report":
            report = True
        elif a == "--allow":
            allow_path = args.pop(0)
        else:
            top = a
    top = top or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    allow = read_allow(allow_path) if allow_path else {}
    long_ = lengths(top, max_lines)
    circ = circles(top)
    rets = bare_returns(top)
    seen = {}
    problems = 0
    for path, line, name, n in long_:
        key = ("length", path, name)
        seen[key] = 1
        if key not in allow:
            problems += 1
            print(f"{path}:{line}: {name} is {n} lines (over {max_lines})")
    for d, size, cyc in circ:
        key = ("circle", d)
        seen[key] = 1
        if key not in allow:
            problems += 1
            print(f"circle in {d} ({size} modules): {' -> '.join(cyc)}")
    counts = {}
    for path, name, line in rets:
        counts.setdefault(("return", path, name), []).append(line)
    for key, lines in sorted(counts.items()):
        seen[key] = len(lines)
        if len(lines) > allow.get(key, (0, 0))[0]:
            problems += 1
            print(f"{key[1]}:{lines[0]}: {key[2]}: {len(lines)} bare return -1 (reads as -EPERM: return a pf error, "
                  "lib/error.h, or a named sentinel)")
    for key, (count, no) in sorted(allow.items(), key=lambda kv: kv[1][1]):
        if seen.get(key, 0) < count:
            problems += 1
            print(f"{allow_path}:{no}: {' '.join(key)} no longer found (or fewer): take it off the list")
    if report:
        print(f"{len(long_)} functions over {max_lines} lines, {len(circ)} circles, {len(rets)} bare return -1 "
              f"in {len(counts)} functions")
        return 0
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

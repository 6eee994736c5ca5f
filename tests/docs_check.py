#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""tests/docs_check.py TOP: the Markdown of the tree says nothing that is not there.

Prints one line "FILE:LINE: problem" per problem and exits 1 if there was any, else 0.  Checked, in every
Markdown file of the tree (git's tracked files, or every *.md outside build/ and hidden folders without git):
  - a link [text](target) to a file of the tree: the file exists (relative to the linking file, as GitHub
    resolves it); with #anchor into a Markdown file, a heading of that file has that anchor;
  - a path of the tree named in the text, in backticks or not (a word starting with one of the tree's top-level
    folders, e.g. results/simdisk, or in backticks one of the linking file's own folder, e.g. bootlab/NOTES.md):
    it exists.  Placeholders (NN, FOLDER, *, {a,b}, ...) are not paths and are skipped;
  - the source map: every product source file (daemon/, reorder/, lib/ *.c) is named, in backticks, in the
    README's "Where things are" section or in the README.md of its top-level folder (daemon/README.md, ...);
  - every document of results/ is listed in results/README.md, which says what produced it.
"""
import os
import re
import subprocess
import sys

PRODUCT = ('daemon', 'reorder', 'lib')
MAP_HEADING = 'Where things are'
RESULTS_INDEX = 'results/README.md'

LINK = re.compile(r'!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
CODE = re.compile(r'`([^`\n]+)`')
# A word that may be a path: letters, digits and ./_- with at least one '/'.
WORD = re.compile(r'(?<![\w./$~-])([A-Za-z0-9_][\w.+-]*/[\w./+-]*)')
GIT_OBJECT = re.compile(r'[0-9a-f]{7,40}:[^/]')
FILE_EXT = re.compile(r'\.(md|sh|c|h|py|svg|csv|txt|in|conf)$')
PLACEHOLDER = re.compile(r'[*?{}<>$|=%]|\.\.\.|…|(^|[/_-])(NN|N|RUN|FOLDER|STAGE|NAME|BUILD|PREFIX|VERSION)([._/-]|$)')


def tracked(top):
    """(the tree's files relative to top, whether git listed them)."""
    try:
        out = subprocess.run(['git', '-C', top, 'ls-files', '-z'], capture_output=True, check=True).stdout
        files = [f for f in out.decode().split('\0') if f]
        if files:
            return files, True
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for d, dirs, names in os.walk(top):
        rel = os.path.relpath(d, top)
        dirs[:] = [x for x in dirs if not x.startswith('.') and not (rel == '.' and x == 'build')
                   and not (rel == 'debian' and not x in ('tests', 'source'))]
        files += [os.path.normpath(os.path.join(rel, n)) for n in names]
    return files, False


def slug(heading):
    """GitHub's anchor of a heading: lower case, markup and punctuation dropped, spaces to hyphens."""
    h = re.sub(r'`|\*\*|__|\[([^\]]*)\]\([^)]*\)', lambda m: m.group(1) or '', heading.strip()).lower()
    h = re.sub(r'[^\w\- ]', '', h)
    return h.replace(' ', '-')


def lines_outside_fences(path):
    """(number, line, in_fence) for each line of a Markdown file."""
    fence = None
    with open(path, encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            m = re.match(r'\s*(```+|~~~+)', line)
            if m:
                fence = None if fence and m.group(1).startswith(fence) else (fence or m.group(1))
                yield n, line, True
                continue
            yield n, line, fence is not None


def anchors(path, cache={}):
    if path not in cache:
        seen, out = {}, set()
        for _, line, fenced in lines_outside_fences(path):
            m = re.match(r'#{1,6}\s+(.*?)\s*#*\s*$', line)
            if m and not fenced:
                s = slug(m.group(1))
                k = seen.get(s, 0)
                seen[s] = k + 1
                out.add(s if k == 0 else f'{s}-{k}')
        cache[path] = out
    return cache[path]


def check_file(top, f, topdirs, has_git, problems):
    base = os.path.dirname(f)

    def exists(p):
        return os.path.lexists(os.path.join(top, p))

    def path_named(n, tok, in_code):
        tok = tok.rstrip('.,;:)"\'').lstrip('("\'')
        rev = GIT_OBJECT.match(tok)
        if rev:  # COMMIT:PATH, as `git show` takes it: history, checked where git has it
            if has_git and subprocess.run(['git', '-C', top, 'cat-file', '-e', tok],
                                          capture_output=True).returncode != 0:
                problems.append(f'{f}:{n}: names {tok}, which git does not have')
            return
        if '/' not in tok or tok.startswith('/') or '://' in tok or PLACEHOLDER.search(tok):
            return
        first = tok.split('/')[0]
        local = os.path.normpath(os.path.join(base, tok))
        if first in topdirs:
            if not exists(tok) and not exists(local):
                problems.append(f'{f}:{n}: names missing path {tok}')
        elif in_code and base and first not in ('.', '..') and (os.path.isdir(os.path.join(top, base, first))
                                                      or FILE_EXT.search(tok)):
            # relative to the document's folder: a folder of it, or a file with a tree file's extension
            if not exists(local):
                problems.append(f'{f}:{n}: names missing path {tok}' + (f' (in {base}/)' if base else ''))

    for n, line, fenced in lines_outside_fences(os.path.join(top, f)):
        if not fenced:
            for m in LINK.finditer(line):
                target = m.group(1)
                if re.match(r'[a-z][a-z0-9+.-]*:', target):
                    continue
                p, _, frag = target.partition('#')
                dest = os.path.normpath(os.path.join(base, p)) if p else f
                if p and not exists(dest):
                    problems.append(f'{f}:{n}: link to missing {target}')
                elif frag and dest.endswith('.md') and frag not in anchors(os.path.join(top, dest)):
                    problems.append(f'{f}:{n}: link to missing anchor {target}')
        text = LINK.sub('', line)
        if fenced:
            for m in WORD.finditer(text):
                path_named(n, m.group(1), True)
            continue
        for m in CODE.finditer(text):
            for tok in m.group(1).split():
                path_named(n, tok, True)
        for m in WORD.finditer(CODE.sub(' ', text)):
            path_named(n, m.group(1), False)


def check_map(top, files, problems):
    """Every product .c file is named in the README's map or its folder's README.md."""
    def named_in(path, section=None):
        try:
            text = open(os.path.join(top, path), encoding='utf-8').read()
        except OSError:
            return set()
        if section:
            m = re.search(r'^#+\s+' + re.escape(section) + r'\s*$(.*?)(?=^#{1,3}\s)', text, re.M | re.S)
            text = m.group(1) if m else ''
        names = set()
        for code in CODE.findall(text):
            for tok in code.split():
                names.add(tok.strip('.,;:()'))
        return names

    readme_map = named_in('README.md', MAP_HEADING)
    if not readme_map:
        problems.append(f'README.md: no section "{MAP_HEADING}" naming files')
    folder = {d: named_in(f'{d}/README.md') for d in PRODUCT}
    sources = sorted(f for f in files if f.split('/')[0] in PRODUCT and f.endswith('.c'))
    count = {}
    for src in sources:
        count[os.path.basename(src)] = count.get(os.path.basename(src), 0) + 1
    for src in sources:
        parts = src.split('/')
        name, inner = parts[-1], '/'.join(parts[1:])
        # A name two folders share (main.c) counts in the README's map only with its folder.
        ok = {name, inner} & folder[parts[0]] or src in readme_map or (count[name] == 1 and name in readme_map)
        if not ok:
            problems.append(f'{src}: named neither in README.md "{MAP_HEADING}" nor in {parts[0]}/README.md')


def check_results_index(top, files, problems):
    """Every document of results/ is listed in results/README.md (with what produced it)."""
    try:
        text = open(os.path.join(top, RESULTS_INDEX), encoding='utf-8').read()
    except OSError:
        return
    named = {tok.strip('.,;:()') for code in CODE.findall(text) for tok in code.split()}
    for f in sorted(files):
        if f.startswith('results/') and f.endswith('.md') and f != RESULTS_INDEX:
            inner = f[len('results/'):]
            if not {inner, os.path.basename(inner), f} & named:
                problems.append(f'{f}: not listed in {RESULTS_INDEX}')


def main():
    top = sys.argv[1] if len(sys.argv) > 1 else '.'
    files, has_git = tracked(top)
    topdirs = {f.split('/')[0] for f in files if '/' in f}
    problems = []
    for f in sorted(x for x in files if x.endswith('.md')):
        check_file(top, f, topdirs, has_git, problems)
    check_map(top, files, problems)
    check_results_index(top, files, problems)
    for p in problems:
        print(p)
    print(f'{len(problems)} problems' if problems else 'docs: every link, path and source file checked')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())

#!/usr/bin/env python3
"""Fails when two source folders include each other, directly or through others (a cycle in the folder graph).

A folder is one part of the code: each folder under src/ (src/runtime/gemmtune/ belongs to runtime), and the top-level
kernels/, tuner/ and bench/. An include is resolved the way the build resolves it, against the project root, src/ and
src/runtime/. Prints each cycle with the include lines that make it, and exits 1; exits 0 with one line when there is
none.

usage: check_folder_deps.py [SOURCE_ROOT]
"""
import os
import re
import sys
from collections import defaultdict

TOP_LEVEL_FOLDERS = ("kernels", "tuner", "bench")
SOURCE_SUFFIXES = (".hpp", ".cpp", ".cu", ".cuh", ".h")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def folder_of(root, path):
    parts = os.path.relpath(path, root).split(os.sep)
    if parts[0] == "src" and len(parts) > 2:
        return parts[1]
    if parts[0] in TOP_LEVEL_FOLDERS and len(parts) > 1:
        return parts[0]
    return None


def source_files(root):
    for top in ("src",) + TOP_LEVEL_FOLDERS:
        for d, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if name.endswith(SOURCE_SUFFIXES):
                    yield os.path.join(d, name)


def resolve(root, including_file, target):
    for base in (os.path.dirname(including_file), root, os.path.join(root, "src"), os.path.join(root, "src", "runtime")):
        candidate = os.path.join(base, target)
        if os.path.isfile(candidate):
            return candidate
    return None


def folder_graph(root):
    """edges[a][b]: the (file, include) lines by which folder a includes folder b."""
    edges = defaultdict(lambda: defaultdict(list))
    for path in source_files(root):
        a = folder_of(root, path)
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = INCLUDE.match(line)
                if not m:
                    continue
                resolved = resolve(root, path, m.group(1))
                b = folder_of(root, resolved) if resolved else None
                if a and b and a != b:
                    edges[a][b].append((os.path.relpath(path, root), m.group(1)))
    return edges


def strongly_connected(edges):
    """Tarjan's algorithm: the folder sets of more than one folder that reach each other."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(set(edges) | {b for a in edges for b in edges[a]}):
        if v not in index:
            visit(v)
    return found


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
    if not os.path.isdir(os.path.join(root, "src")):
        print(f"check_folder_deps: {root} has no src/", file=sys.stderr)
        return 2
    edges = folder_graph(root)
    cycles = strongly_connected(edges)
    for folders in cycles:
        print("folders that include each other: " + ", ".join(folders))
        for a in folders:
            for b in folders:
                for path, target in edges[a].get(b, []):
                    print(f"  {a} -> {b}: {path} includes {target}")
    if cycles:
        return 1
    print(f"no include cycle between the {len(set(edges) | {b for a in edges for b in edges[a]})} source folders")
    return 0


if __name__ == "__main__":
    sys.exit(main())

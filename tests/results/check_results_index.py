#!/usr/bin/env python3
"""results/README.md indexes every committed file under results/: each is a row of one of its tables, whose first
cell is the file's path below results/ in `code`, and every row names a file that exists.

The files are git's (git ls-files) where the tree is a git checkout, so what a run writes into results/ (a db, a
sweep, a benchmark's work, all ignored by .gitignore) is not asked for; elsewhere (an unpacked source archive) every
file under results/.

usage: check_results_index.py REPO_ROOT        exit 0: the index and the folder agree; 1: what differs is listed
"""
import os
import re
import subprocess
import sys

INDEX = "README.md"
ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|")


def indexed(results):
    with open(os.path.join(results, INDEX), encoding="utf-8") as f:
        return [m.group(1) for m in map(ROW.match, f) if m]


def present(root, results):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--", "results"], check=True,
                             capture_output=True).stdout.decode()
        in_git = out.split("\0")
        if any(in_git):
            return {os.path.relpath(os.path.join(root, f), results) for f in in_git if f}
    except (OSError, subprocess.CalledProcessError):
        pass  # not a git checkout, or no git
    return {os.path.relpath(os.path.join(folder, f), results) for folder, _, files in os.walk(results) for f in files}


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = sys.argv[1]
    results = os.path.join(root, "results")
    listed = indexed(results)
    files = present(root, results) - {INDEX}
    problems = [f"results/{f}: listed twice in results/{INDEX}" for f in sorted({f for f in listed
                                                                                   if listed.count(f) > 1})]
    problems += [f"results/{f}: not listed in results/{INDEX}" for f in sorted(files - set(listed))]
    problems += [f"results/{f}: listed in results/{INDEX}, but no such file"
                 for f in sorted(set(listed)) if not os.path.isfile(os.path.join(results, f))]
    for p in problems:
        print(p)
    print(f"check_results_index: {len(problems)} problem(s)" if problems else
          f"check_results_index: results/{INDEX} lists the {len(files)} files under results/")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

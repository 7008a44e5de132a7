#!/usr/bin/env python3
"""The docs cite only what exists: every relative link and every repository path in README.md, docs/*.md,
results/README.md and kernels/PERFORMANCE.md names a file or folder of the tree (a link's #anchor, a heading of its
target), every docs/ page is linked from README.md (its map of docs/), and every script a user is given (scripts/,
not scripts/dev/) is named in README.md or a docs page.

A repository path is a word in `code` that starts with one of the tree's top folders (src/, scripts/, kernels/,
docs/, bench/, ...). Inside fenced code blocks only words that end in a file extension count, as the design diagram
names modules (tuner/plan), not files. Skipped: words with a placeholder (<gpu>, *, $VAR, {a,b}), and under results/
anything outside a GPU folder (results/gemmtune.db is where a sweep writes, not a committed file).

usage: check_doc_paths.py REPO_ROOT        exit 0: all cited paths exist; 1: the missing ones are listed
"""
import os
import re
import sys

TOP_FOLDERS = {"src", "scripts", "kernels", "docs", "bench", "tests", "tuner", "profiles", "cmake", "results", ".ci",
               "python"}
FILE_EXTENSION = re.compile(r"\.(sh|py|json|gz|cu|cuh|cpp|hpp|h|md|yaml|sbatch|txt|cmake|png)$")
PLACEHOLDER = re.compile(r"[<>*${}…|]|\.\.\.")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
INLINE_CODE = re.compile(r"`([^`\n]+)`")


def doc_files(root):
    names = ["README.md", "results/README.md", "kernels/PERFORMANCE.md"]
    docs = os.path.join(root, "docs")
    if os.path.isdir(docs):
        names += sorted("docs/" + f for f in os.listdir(docs) if f.endswith(".md"))
    return [n for n in names if os.path.isfile(os.path.join(root, n))]


def heading_anchors(path):
    # GitHub's anchors: the heading lowercased, punctuation dropped, spaces as hyphens.
    anchors = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"#+\s+(.*)", line)
            if m:
                anchors.add(re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-"))
    return anchors


def cited_words(text):
    """(line number, word, in a fenced block) for every word of code in the text."""
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        spans = [line] if fenced else INLINE_CODE.findall(line)
        for span in spans:
            for word in span.split():
                yield number, word, fenced


def repository_path(word, gpu_folders):
    word = word.strip("\"'(),;.").split("=", 1)[-1]
    word = re.sub(r":\d+(-\d+)?$", "", word)  # file:line
    top = word.split("/", 1)[0]
    if "/" not in word or top not in TOP_FOLDERS or PLACEHOLDER.search(word):
        return None
    if top == "results" and word != "results/README.md" and word.split("/")[1] not in gpu_folders:
        return None
    return word


def check(root):
    missing = []
    results = os.path.join(root, "results")
    gpu_folders = {d for d in os.listdir(results) if os.path.isdir(os.path.join(results, d))} if os.path.isdir(
        results) else set()
    cited_text = ""
    for name in doc_files(root):
        path = os.path.join(root, name)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        cited_text += text
        for number, line in enumerate(text.splitlines(), 1):
            for target in LINK.findall(line):
                if re.match(r"[a-z]+:", target):
                    continue  # https:, mailto:
                file_part, _, anchor = target.partition("#")
                linked = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
                if not os.path.exists(linked):
                    missing.append(f"{name}:{number}: link to {target}: no such file")
                elif anchor and linked.endswith(".md") and anchor not in heading_anchors(linked):
                    missing.append(f"{name}:{number}: link to {target}: no such heading")
        for number, word, fenced in cited_words(text):
            cited = repository_path(word, gpu_folders)
            if cited is None or (fenced and not FILE_EXTENSION.search(cited.rstrip("/"))):
                continue
            if not os.path.exists(os.path.join(root, cited)):
                missing.append(f"{name}:{number}: {cited}: no such file or folder")
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        readme_links = {os.path.normpath(t.partition("#")[0]) for t in LINK.findall(f.read())}
    for name in doc_files(root):
        if name.startswith("docs/") and name not in readme_links:
            missing.append(f"{name}: a docs page README.md does not link to (add it to the map of docs/)")
    scripts = os.path.join(root, "scripts")
    for folder, dirs, files in os.walk(scripts):
        dirs[:] = [d for d in dirs if d != "__pycache__" and os.path.relpath(os.path.join(folder, d), scripts) != "dev"]
        for f in files:
            rel = os.path.relpath(os.path.join(folder, f), root)
            if rel not in cited_text:
                missing.append(f"{rel}: a script users run that neither README.md nor docs/ names "
                               f"(name it there, or move it to scripts/dev/)")
    return missing


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    missing = check(sys.argv[1])
    for m in missing:
        print(m)
    print(f"check_doc_paths: {len(missing)} missing" if missing else "check_doc_paths: every cited path exists")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The imports of src/ drawn as a graph, and the circles in it (docs/architecture.md, "Modules").

A node is a file module (`src/manager/apply/mod.rs` is `manager::apply`); an arrow A -> B is a
path A names that lands in B: a `use crate::…`/`super::…`/`self::…` tree, or an inline
`crate::…`/`super::…` path. A module naming its own descendants is not an arrow (that is how a
module is built from its files); a module naming an ancestor's items (`super::Thing`) is
counted apart and not part of a circle, since the ancestor declared the module. Test modules
(`#[cfg(test)] mod …`) are left out: a test may reach anywhere.

It prints the number of modules and arrows, the circles among top-level modules and among
file modules, and any arrow into `cli` or `manager` from a module below them (the two top
layers). The exit status is 1 when there is a circle or such an arrow. Usage:
`python3 scripts/import_circles.py [SRC_DIR]` (default: src/ beside this script).
"""

from __future__ import annotations

import os
import re
import sys
from collections import defaultdict
from pathlib import Path

Module = tuple[str, ...]

#: The layers nothing below may name.
TOP_LAYERS = ("cli", "manager")


def file_modules(src: Path) -> dict[Module, Path]:
    """Every `.rs` file under `src`, keyed by the module it defines."""
    modules: dict[Module, Path] = {}
    for directory, _, files in os.walk(src):
        for name in files:
            if not name.endswith(".rs"):
                continue
            path = Path(directory, name)
            parts = path.relative_to(src).with_suffix("").parts
            if parts[-1] in ("mod", "lib", "main"):
                parts = parts[:-1]
            modules[parts] = path
    return modules


def split_top_level(body: str) -> list[str]:
    """`a, b::{c, d}` -> [`a`, `b::{c, d}`]: commas outside braces."""
    parts, depth, current = [], 0, []
    for ch in body:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


def use_paths(prefix: list[str], tree: str) -> list[list[str]]:
    """The paths a `use` tree names, each as its segments."""
    paths = []
    for part in split_top_level(tree):
        group = re.match(r"^([\w:]*?)(?:::)?\{(.*)\}$", part, re.S)
        if group:
            head = [s for s in group.group(1).split("::") if s]
            paths += use_paths(prefix + head, group.group(2))
        else:
            name = part.split(" as ")[0].strip()
            paths.append(prefix + [s for s in name.split("::") if s])
    return paths


def landing(modules: dict[Module, Path], me: Module, path: list[str]) -> Module | None:
    """The file module a path from `me` lands in (its longest module prefix)."""
    if not path:
        return None
    if path[0] == "crate":
        full = path[1:]
    elif path[0] == "self":
        full = list(me) + path[1:]
    elif path[0] == "super":
        base = list(me)
        while path and path[0] == "super":
            base, path = base[:-1], path[1:]
        full = base + path
    else:
        return None
    for n in range(len(full), 0, -1):
        if tuple(full[:n]) in modules:
            return tuple(full[:n])
    return None


def arrows(modules: dict[Module, Path]) -> set[tuple[Module, Module]]:
    """Every arrow between two different file modules, descendants left out."""
    found = set()
    for me, path in modules.items():
        text = re.sub(r"//[^\n]*", "", path.read_text(encoding="utf-8"))
        text = re.split(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod \w+\s*\{", text)[0]
        paths = []
        for use in re.finditer(r"\buse\s+((?:crate|super|self)\b[^;]*);", text, re.S):
            paths += use_paths([], use.group(1))
        for inline in re.finditer(r"\b((?:crate|super)(?:::\w+)+)", text):
            paths.append(inline.group(1).split("::"))
        for named in paths:
            target = landing(modules, me, named)
            if target and target != me and target[: len(me)] != me:
                found.add((me, target))
    return found


def circles(nodes: list, edges: set) -> list[list]:
    """Strongly connected components of more than one node (Tarjan)."""
    graph = defaultdict(set)
    for a, b in edges:
        graph[a].add(b)
    index, low, stack, on_stack, result = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10_000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
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
                result.append(sorted(component))

    for v in nodes:
        if v not in index:
            visit(v)
    return result


def main() -> int:
    src = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "src"
    modules = file_modules(src)
    every = arrows(modules)

    def top(m: Module) -> str:
        return m[0] if m else "(crate root)"

    def is_ancestor(b: Module, a: Module) -> bool:
        return len(b) < len(a) and a[: len(b)] == b

    sideways = {(a, b) for a, b in every if not is_ancestor(b, a)}
    tops = sorted({top(m) for m in modules})
    top_arrows = {(top(a), top(b)) for a, b in every if top(a) != top(b)}
    file_circles = circles(sorted(modules), sideways)
    top_circles = circles(tops, top_arrows)
    upward = sorted(
        (a, b)
        for a, b in top_arrows
        if b in TOP_LAYERS and a not in TOP_LAYERS and a != "(crate root)"
    )
    print(f"{len(tops)} top-level modules, {len(top_arrows)} arrows between them")
    print(
        f"{len(modules)} file modules, {len(sideways)} arrows between them "
        f"(and {len(every) - len(sideways)} to an ancestor's items)"
    )
    for c in top_circles:
        print("circle among top-level modules: " + " <-> ".join(c))
    for c in file_circles:
        print("circle among files: " + " <-> ".join("::".join(m) for m in c))
    for a, b in upward:
        print(f"arrow up: {a} -> {b}")
    if top_circles or file_circles or upward:
        return 1
    print("no circle, no arrow into cli or manager from below")
    return 0


if __name__ == "__main__":
    sys.exit(main())

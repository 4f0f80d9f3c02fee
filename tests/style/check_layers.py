#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""
check_layers.py - the libraries' layers, as lib/meson.build declares them, hold in the code and in
docs/architecture.md.

lib/meson.build lists the core libraries in dependency order, each with a comment saying what it
is for; each lib/<name>/meson.build names the libraries it uses (deps) and those whose headers
alone it reads (header_deps). The build already keeps private headers (lib/<name>/private/) off
every other library's include path; this check adds what the build cannot see, since a library
gets its deps' deps' headers on its path too:
  - every header a library's files include by name ("sl_x.h") is its own, or a public header of
    a library it names in deps or header_deps (libsluice, lib/api, may read lib/common's; the
    libfabric provider, lib/fabric, only libsluice's) (an include with a path in it is refused: no
    reach-around through "../" or "private/");
  - a public header includes no private one;
  - every name in deps comes earlier in the list;
  - docs/architecture.md's graph, between its "layers:" markers, is the one this script
    prints (--write puts it there).

Usage: check_layers.py SOURCE_ROOT [--write]
"""
import os
import re
import sys

BEGIN = "<!-- layers: written by tests/style/check_layers.py --write -->"
END = "<!-- /layers -->"


def libraries(root):
    """[(name, purpose)] in lib/meson.build's order."""
    text = open(os.path.join(root, "lib", "meson.build")).read()
    block = re.search(r"^libraries = \[\n(.*?)^\]", text, re.S | re.M).group(1)
    return re.findall(r"^\s*'(\w+)',\s*#\s*(.*)$", block, re.M)


def names_in(text, var):
    m = re.search(r"^%s = \[(.*?)\]" % var, text, re.S | re.M)
    return re.findall(r"'(\w+)'", m.group(1)) if m else []


def own_files(root, lib):
    d = os.path.join(root, "lib", lib)
    for sub in ("", "private"):
        p = os.path.join(d, sub)
        if os.path.isdir(p):
            for f in sorted(os.listdir(p)):
                if f.endswith((".c", ".h")):
                    yield os.path.join(p, f), sub == "" and f.endswith(".h")


def public_headers(root, lib):
    d = os.path.join(root, "lib", lib)
    return {f for f in os.listdir(d) if f.endswith(".h")}


def graph(libs, deps):
    width = max(len(n) for n, _ in libs)
    lines = ["```"]
    for name, purpose in libs:
        uses = ", ".join(deps[name]) if deps[name] else "-"
        lines.append("%-*s  <- %s" % (width, name, uses))
        lines.append("%-*s     %s" % (width, "", purpose))
    lines.append("```")
    return "\n".join(lines)


def main():
    root = sys.argv[1]
    write = "--write" in sys.argv[2:]
    libs = libraries(root)
    order = [n for n, _ in libs]
    errors = []
    deps, header_deps = {}, {}
    for name in order:
        text = open(os.path.join(root, "lib", name, "meson.build")).read()
        deps[name] = names_in(text, "deps")
        header_deps[name] = names_in(text, "header_deps")
        for d in deps[name]:
            if d not in order or order.index(d) >= order.index(name):
                errors.append("lib/%s/meson.build: dep '%s' is not an earlier library" % (name, d))
    # Beside the core libraries: libsluice (lib/api) and the libfabric provider over it
    # (lib/fabric), shared libraries for applications.
    apps = ["api", "fabric"]
    publics = {n: public_headers(root, n) for n in order + apps}
    owner = {h: n for n, hs in publics.items() for h in hs}
    for name in order + apps:
        allowed = {name} | set(deps.get(name, [])) | set(header_deps.get(name, []))
        if name == "api":
            allowed |= {"common"}  # libsluice reads lib/common's inline helpers only
        if name == "fabric":
            allowed |= {"api"}  # the provider is an application of libsluice
        private = set()
        pdir = os.path.join(root, "lib", name, "private")
        if os.path.isdir(pdir):
            private = set(os.listdir(pdir))
        for path, is_public in own_files(root, name):
            rel = os.path.relpath(path, root)
            for n, inc in enumerate(open(path).read().split("\n"), 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', inc)
                if not m:
                    continue
                h = m.group(1)
                where = "%s:%d: \"%s\"" % (rel, n, h)
                if "/" in h:
                    errors.append("%s: includes by path" % where)
                elif h in private:
                    if is_public:
                        errors.append("%s: a public header includes a private one" % where)
                elif h in owner:
                    if owner[h] not in allowed:
                        errors.append("%s: lib/%s is not among lib/%s's deps" %
                                      (where, owner[h], name))
                elif h not in publics.get(name, set()):
                    errors.append("%s: no such header of lib/%s or its deps" % (where, name))
    doc = os.path.join(root, "docs", "architecture.md")
    text = open(doc).read()
    want = BEGIN + "\n" + graph(libs, deps) + "\n" + END
    m = re.search(re.escape(BEGIN) + r".*?" + re.escape(END), text, re.S)
    if m is None:
        errors.append("docs/architecture.md: no %s ... %s block" % (BEGIN, END))
    elif m.group(0) != want:
        if write:
            open(doc, "w").write(text[:m.start()] + want + text[m.end():])
        else:
            errors.append("docs/architecture.md: the graph is not lib/meson.build's "
                          "(tests/style/check_layers.py . --write)")
    for e in errors:
        print(e)
    print("layers: %d librar%s, %d problem(s)" % (len(order), "y" if len(order) == 1 else "ies",
                                                 len(errors)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

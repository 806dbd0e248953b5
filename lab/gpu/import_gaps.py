#!/usr/bin/env python3
"""Static check, runs anywhere (Python >= 3.10): which top-level modules do the carried tree's
module-level imports (outside try/except, functions and TYPE_CHECKING) need that neither the tree,
the standard library, nor the device's installed packages provide?
Usage: import_gaps.py SITE_DIR DEVICE_IMPORT_NAMES_FILE [PACKAGE_PREFIX...]"""
import ast, os, sys

site, names_file = sys.argv[1], sys.argv[2]
prefixes = tuple(sys.argv[3:]) or ("vllm/",)
provided = set(sys.stdlib_module_names) | {"__future__"}
provided |= {l.strip() for l in open(names_file) if l.strip() and not l.startswith("#")}
for entry in os.listdir(site):
    provided.add(entry.split(".")[0].split("-")[0])

class V(ast.NodeVisitor):
    def __init__(self): self.mods = []
    def visit_Try(self, n):          # guarded imports are optional
        for s in n.finalbody + n.orelse: self.visit(s)
    visit_TryStar = visit_Try
    def visit_FunctionDef(self, n): pass
    visit_AsyncFunctionDef = visit_FunctionDef
    def visit_If(self, n):
        t = ast.unparse(n.test)
        if "TYPE_CHECKING" in t: 
            for s in n.orelse: self.visit(s)
            return
        self.generic_visit(n)
    def visit_Import(self, n): self.mods += [a.name for a in n.names]
    def visit_ImportFrom(self, n):
        if n.level == 0 and n.module: self.mods.append(n.module)

need = {}
for root, dirs, files in os.walk(site):
    rel = os.path.relpath(root, site) + "/"
    if not rel.startswith(prefixes): continue
    for f in files:
        if not f.endswith(".py"): continue
        p = os.path.join(root, f)
        try: tree = ast.parse(open(p, encoding="utf-8", errors="ignore").read())
        except SyntaxError: continue
        v = V(); v.visit(tree)
        for m in v.mods:
            top = m.split(".")[0]
            if top not in provided: need.setdefault(top, []).append(os.path.relpath(p, site))
for top in sorted(need):
    fs = sorted(set(need[top]))
    print(f"{top}: {len(fs)} file(s), e.g. {', '.join(fs[:3])}")

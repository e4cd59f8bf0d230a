#!/usr/bin/env python3
"""Import circles between the files of a crate: strongly connected components of the graph
'file A uses an item defined in file B'. Paths through a module's re-exports (`pub use
child::Item` in a mod.rs) are followed to the file that defines the item; re-export lines
themselves are not edges. Test modules are ignored."""
import os, re, sys
root = sys.argv[1]
files = {}
for d, _, fs in os.walk(root):
    for f in fs:
        if f.endswith('.rs'):
            p = os.path.join(d, f)
            parts = os.path.relpath(p, root)[:-3].split('/')
            if parts[-1] in ('mod', 'lib', 'main'):
                parts = parts[:-1]
            files[tuple(parts)] = p
def strip_tests(src):
    """The file without its test module and its comment lines (a doc link is not an import)."""
    src = re.split(r'#\[cfg\(test\)\]\s*(?:pub\(crate\)\s+)?mod tests', src)[0]
    return re.sub(r'(?m)^\s*//.*$', '', src)
src_of = {m: strip_tests(open(p).read()) for m, p in files.items()}
# re-exports: module -> {name: path segments (absolute)}
reexp = {m: {} for m in files}
USE = re.compile(r'(pub(?:\([^)]*\))?\s+)?use\s+([^;]+);', re.S)
def expand(tree, prefix):
    """Expands a use tree into full paths (lists of segments); returns (path, alias)."""
    tree = re.sub(r'//[^\n]*', '', tree).strip()
    m = re.match(r'^(.*?)::\{(.*)\}$', tree, re.S)
    if m:
        head = [s for s in m.group(1).split('::') if s]
        inner, depth, cur = [], 0, ''
        for ch in m.group(2):
            if ch == '{': depth += 1
            if ch == '}': depth -= 1
            if ch == ',' and depth == 0:
                inner.append(cur); cur = ''
            else:
                cur += ch
        inner.append(cur)
        out = []
        for i in inner:
            if i.strip():
                out += expand(i, prefix + head)
        return out
    alias = None
    if ' as ' in tree:
        tree, alias = [x.strip() for x in tree.rsplit(' as ', 1)]
    segs = [s for s in tree.split('::') if s]
    if segs == ['self']:
        return [(prefix, alias or (prefix[-1] if prefix else None))]
    return [(prefix + segs, alias or segs[-1])]
def absolute(m, is_mod, segs):
    """Absolute module path of a use path written in module m."""
    if not segs: return None
    if segs[0] == 'crate': return segs[1:]
    here = list(m)
    if segs[0] in ('self',):
        return here + segs[1:]
    if segs[0] == 'super':
        base = here
        while segs and segs[0] == 'super':
            base = base[:-1]; segs = segs[1:]
        return base + segs
    # a child module (2018 paths: relative to the current module)
    if tuple(here + [segs[0]]) in files:
        return here + segs
    return None
for m in files:
    is_mod = os.path.basename(files[m]) in ('mod.rs', 'lib.rs', 'main.rs')
    for u in USE.finditer(src_of[m]):
        if not u.group(1): continue
        for path, alias in expand(u.group(2), []):
            a = absolute(m, is_mod, path)
            if a is not None and alias:
                reexp[m][alias] = a
def resolve(path, depth=0):
    """The file (module key) defining the item at absolute path."""
    for n in range(len(path), -1, -1):
        mod = tuple(path[:n])
        if mod in files:
            rest = path[n:]
            if rest and rest[0] in reexp[mod] and depth < 10:
                return resolve(reexp[mod][rest[0]] + rest[1:], depth + 1)
            return mod
    return None
graph = {m: set() for m in files}
PATH = re.compile(r'\b(crate|super|self)((?:::\w+)+)')
for m in files:
    is_mod = os.path.basename(files[m]) in ('mod.rs', 'lib.rs', 'main.rs')
    src = src_of[m]
    # private use statements (pub use lines are facades)
    for u in USE.finditer(src):
        if u.group(1): continue
        for path, _ in expand(u.group(2), []):
            a = absolute(m, is_mod, path)
            if a is None: continue
            r = resolve(a)
            if r is not None and r != m and r != ():
                graph[m].add(r)
    body = USE.sub('', src)
    for p in PATH.finditer(body):
        segs = [p.group(1)] + [s for s in p.group(2).split('::') if s]
        a = absolute(m, is_mod, segs)
        if a is None: continue
        r = resolve(a)
        if r is not None and r != m and r != ():
            graph[m].add(r)
idx, low, st, on, out, c = {}, {}, [], set(), [], [0]
sys.setrecursionlimit(10000)
def sc(v):
    idx[v] = low[v] = c[0]; c[0] += 1; st.append(v); on.add(v)
    for w in graph[v]:
        if w not in idx:
            sc(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], idx[w])
    if low[v] == idx[v]:
        comp = []
        while True:
            w = st.pop(); on.discard(w); comp.append(w)
            if w == v: break
        out.append(comp)
for v in graph:
    if v not in idx: sc(v)
big = [sorted('::'.join(x) or 'lib' for x in comp) for comp in out if len(comp) > 1]
print(f"{root}: {len(files)} files, largest circle {max((len(x) for x in big), default=1)}")
for x in sorted(big, key=len, reverse=True):
    print("  circle of", len(x), ":", ", ".join(x))
if '-v' in sys.argv:
    for m in sorted(graph): print('  ', '::'.join(m) or 'lib', '->', sorted('::'.join(x) for x in graph[m]))

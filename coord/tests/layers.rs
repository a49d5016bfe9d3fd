//! Tidy: the layers of coord/src (ARCHITECTURE.md, "coord in layers"), checked on the source text with
//! std only, as rust-analyzer's `tidy` checks its own tree.
//!
//! | layer | modules | may import |
//! |---|---|---|
//! | 0 base | `base::*` | `base` |
//! | 1 stores | `stores::*` | `base`, `stores` |
//! | 2 fleet | every other module | any |
//!
//! An import is any path into the crate a file names outside comments: `use crate::…` (also inside
//! `{…}` groups), a `crate::x::…` path in code, `super::…` and `self::…`, and a child module's name. A
//! base or store module also never names the crate root (`crate::Error`): the root re-exports every
//! layer, so a path through it hides which layer it reaches.
//!
//! `cargo test -p snowmint-coord --test layers -- --nocapture` prints the module graph and its cycles
//! (`SNOWMINT_LAYERS_SRC=DIR`: of another tree).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layer of a module path (`base::store`, `stores::etcd::http`, `lease`): 0 base, 1 stores,
/// 2 fleet.
fn layer(module: &str) -> u8 {
    match module.split("::").next() {
        Some("base") => 0,
        Some("stores") => 1,
        _ => 2,
    }
}

const LAYER_NAMES: [&str; 3] = ["base", "stores", "fleet"];

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module a file under `src` holds: `lib.rs` → `` (the root), `etcd.rs` → `etcd`,
/// `etcd/http.rs` → `etcd::http`, `lease/mod.rs` → `lease`.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts.join("::")
}

/// `text` without comments (line, doc and block comments) and without the contents of string and
/// character literals (so that `"file://…"` is not taken for a comment, nor a message for a path).
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == b'r' && matches!(b.get(i + 1), Some(b'#') | Some(b'"')) && !ident(b, i) {
            // A raw string: r"…", r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push(c as char);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == b'"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&b'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j;
        } else if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == b'\'' {
            // A character literal ('a', '\n', '\''), or a lifetime ('a, 'static): left as it is.
            let close = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..]
                    .iter()
                    .position(|&x| x == b'\'')
                    .map(|p| i + 2 + p)
            } else if b.get(i + 2) == Some(&b'\'') {
                Some(i + 2)
            } else {
                text[i + 1..]
                    .chars()
                    .next()
                    .filter(|ch| ch.len_utf8() > 1 && b.get(i + 1 + ch.len_utf8()) == Some(&b'\''))
                    .map(|ch| i + 1 + ch.len_utf8())
            };
            match close {
                Some(end) => {
                    out.push_str("' '");
                    i = end + 1;
                }
                None => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            let ch = text[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// Whether the byte before `i` continues an identifier (so `b[i]` is not the start of a token).
fn ident(b: &[u8], i: usize) -> bool {
    i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')
}

/// The paths of a `use` tree (`crate::{a::X, b::{Y, Z}}` → `crate::a::X`, `crate::b::Y`, `crate::b::Z`).
fn expand_use(tree: &str) -> Vec<String> {
    let tree: String = tree
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace(" as ", "@")
        .replace(' ', "");
    let mut out = Vec::new();
    expand(&tree, "", &mut out);
    out
}

fn expand(tree: &str, prefix: &str, out: &mut Vec<String>) {
    if let Some(open) = tree.find('{') {
        let base = format!("{prefix}{}", &tree[..open]);
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(&inner[start..i], &base, out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        expand(&inner[start..], &base, out);
    } else if !tree.is_empty() {
        let path = tree.split('@').next().unwrap_or(tree);
        out.push(format!("{prefix}{path}"));
    }
}

/// The inline modules of a file's code (`mod tests { … }`): their spans and names.
fn inline_modules(code: &str) -> Vec<(usize, usize, String)> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(p) = code[from..].find("mod ") {
        let at = from + p;
        from = at + 4;
        if ident(b, at) {
            continue;
        }
        let name: String = code[at + 4..]
            .trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let after = code[at + 4..].trim_start()[name.len()..].trim_start();
        if name.is_empty() || !after.starts_with('{') {
            continue; // `mod x;`: a file of its own
        }
        let open = code.len() - after.len();
        let mut depth = 0;
        let mut end = code.len();
        for (i, c) in code[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + i;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.push((open, end, name));
    }
    out
}

/// The modules of the crate that the code of the file holding `module` names, resolved against the
/// crate's file modules `modules`.
fn imports(module: &str, code: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    edges(module, code, modules, true)
}

/// [`imports`] without the paths only a re-export (`pub use …`, `pub(crate) use …`) or an import for
/// the documentation (`#[cfg(doc)] use …`) names: a re-export gives an item another path, and neither
/// is a dependency of code (the cycles are counted on these).
fn code_imports(module: &str, code: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    edges(module, code, modules, false)
}

fn edges(
    module: &str,
    code: &str,
    modules: &BTreeSet<String>,
    reexports: bool,
) -> BTreeSet<String> {
    // Each path with the position it is named at.
    let mut paths: Vec<(usize, String)> = Vec::new();
    // The spans of the `use` items (their paths are read from the tree, not again below).
    let mut uses: Vec<(usize, usize)> = Vec::new();
    // `use` items (a tree may span lines).
    let mut from = 0;
    while let Some(p) = code[from..].find("use ") {
        let at = from + p;
        from = at + 4;
        if ident(code.as_bytes(), at) {
            continue;
        }
        let end = code[at..].find(';').map_or(code.len(), |e| at + e);
        uses.push((at, end));
        let before = code[..at].trim_end();
        let reexport = before.ends_with("pub")
            || before.ends_with(')')
                && before
                    .rfind("pub(")
                    .is_some_and(|p| !before[p..].contains('\n'));
        let for_docs = before.ends_with("#[cfg(doc)]");
        if (reexport || for_docs) && !reexports {
            continue;
        }
        paths.extend(expand_use(&code[at + 4..end]).into_iter().map(|u| (at, u)));
    }
    // `crate::…` and `super::…` paths anywhere in the code (a `use` group's head is read above).
    for key in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(p) = code[from..].find(key) {
            let at = from + p;
            from = at + key.len();
            if ident(code.as_bytes(), at) || uses.iter().any(|&(b, e)| b < at && at < e) {
                continue;
            }
            let path: String = code[at..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            if !path.ends_with("::") {
                paths.push((at, path));
            }
        }
    }
    let inline = inline_modules(code);
    let parent = |m: &str| {
        m.rsplit_once("::")
            .map_or(String::new(), |(p, _)| p.to_string())
    };
    let mut found = BTreeSet::new();
    for (at, path) in paths {
        // The module the path is named in: the file's, or an inline module of it.
        let mut here = module.to_string();
        for (open, end, name) in &inline {
            if *open < at && at < *end {
                here = join(&here, name);
            }
        }
        let segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
        let (mut to, rest): (String, &[&str]) = match segs.first() {
            Some(&"crate") => (String::new(), &segs[1..]),
            Some(&"super") => {
                let mut m = parent(&here);
                let mut i = 1;
                while segs.get(i) == Some(&"super") {
                    m = parent(&m);
                    i += 1;
                }
                (m, &segs[i..])
            }
            Some(&"self") => (here.clone(), &segs[1..]),
            // A child module named without `self::` (2018 paths: `use backend::Connection`).
            Some(first) if modules.contains(&join(&here, first)) => (here.clone(), &segs[..]),
            _ => continue,
        };
        // An inline module is part of its file's module.
        while !to.is_empty() && !modules.contains(&to) {
            to = parent(&to);
        }
        // The longest prefix of the path that is a module of the crate.
        for s in rest {
            let next = join(&to, s);
            if modules.contains(&next) {
                to = next;
            } else {
                break;
            }
        }
        if to != module {
            found.insert(to);
        }
    }
    found
}

fn join(a: &str, b: &str) -> String {
    if a.is_empty() {
        b.to_string()
    } else {
        format!("{a}::{b}")
    }
}

type Graph = BTreeMap<String, BTreeSet<String>>;

/// The module graph of coord/src: every module and the modules it names (all of them, and those its
/// code depends on: without re-exports).
fn graph() -> (Graph, Graph) {
    // `SNOWMINT_LAYERS_SRC=DIR`: check another tree (an older one, its files placed in the layers).
    let src = std::env::var_os("SNOWMINT_LAYERS_SRC").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        PathBuf::from,
    );
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(&src, f)).collect();
    let (mut all, mut code_deps) = (Graph::new(), Graph::new());
    for f in &files {
        let m = module_of(&src, f);
        let code = code_only(&std::fs::read_to_string(f).unwrap());
        all.insert(m.clone(), imports(&m, &code, &modules));
        code_deps.insert(m.clone(), code_imports(&m, &code, &modules));
    }
    (all, code_deps)
}

/// The strongly connected components of more than one module (Tarjan), each sorted; the crate root
/// (which declares and re-exports every module) left out.
fn cycles(g: &Graph) -> Vec<Vec<String>> {
    struct T<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a str) {
        let i = t.index.len();
        t.index.insert(v, i);
        t.low.insert(v, i);
        t.stack.push(v);
        t.on.insert(v);
        for w in t.g.get(v).into_iter().flatten() {
            let w = w.as_str();
            if w.is_empty() || !t.g.contains_key(w) {
                continue;
            }
            if !t.index.contains_key(w) {
                visit(t, w);
                let lw = t.low[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if t.on.contains(w) {
                let iw = t.index[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if t.low[v] == t.index[v] {
            let mut scc = Vec::new();
            loop {
                let w = t.stack.pop().unwrap();
                t.on.remove(w);
                scc.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if scc.len() > 1 {
                scc.sort();
                t.out.push(scc);
            }
        }
    }
    let mut t = T {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !v.is_empty() && !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out
}

fn name(m: &str) -> &str {
    if m.is_empty() {
        "(root)"
    } else {
        m
    }
}

/// Where a base or store module names a layer above its own (or the crate root).
fn violations(g: &Graph) -> Vec<String> {
    let mut out = Vec::new();
    for (m, deps) in g {
        if m.is_empty() || layer(m) == 2 {
            continue;
        }
        for d in deps {
            if d.is_empty() || layer(d) > layer(m) {
                out.push(format!(
                    "{} ({}) imports {} ({})",
                    name(m),
                    LAYER_NAMES[layer(m) as usize],
                    name(d),
                    if d.is_empty() {
                        "the crate root, which re-exports every layer"
                    } else {
                        LAYER_NAMES[layer(d) as usize]
                    }
                ));
            }
        }
    }
    out
}

#[test]
fn base_and_stores_import_nothing_above_them() {
    let (g, code_deps) = graph();
    println!("coord/src module graph (module -> modules it names; \"(re-export or docs)\": named by a re-export or for the documentation only):");
    for (m, deps) in &g {
        let deps: Vec<String> = deps
            .iter()
            .map(|d| match code_deps[m].contains(d) {
                true => name(d).to_string(),
                false => format!("{} (re-export or docs)", name(d)),
            })
            .collect();
        println!(
            "  [{}] {} -> {}",
            LAYER_NAMES[if m.is_empty() { 2 } else { layer(m) as usize }],
            name(m),
            deps.join(", ")
        );
    }
    let cycles = cycles(&code_deps);
    println!(
        "cycles (modules whose code reaches each other): {}",
        cycles.len()
    );
    for c in &cycles {
        println!("  {} modules: {}", c.len(), c.join(", "));
    }
    let bad = violations(&g);
    assert!(
        bad.is_empty(),
        "{} imports against the layers (base < stores < fleet; ARCHITECTURE.md):\n  {}",
        bad.len(),
        bad.join("\n  ")
    );
}

/// The checker itself: a planted import of each forbidden kind is found.
#[test]
fn a_planted_import_is_found() {
    let modules: BTreeSet<String> = [
        "base",
        "base::name",
        "stores",
        "stores::etcd",
        "stores::etcd::http",
        "lease",
    ]
    .map(String::from)
    .into();
    let cases = [
        ("base::name", "use crate::lease::Defect;", "lease"),
        (
            "base::name",
            "use crate::{stores::etcd, base};",
            "stores::etcd",
        ),
        ("base::name", "fn f() { crate::lease::x() }", "lease"),
        ("base::name", "fn f() -> crate::Error { todo!() }", ""),
        (
            "stores::etcd::http",
            "use super::super::super::lease;",
            "lease",
        ),
        ("base::name", "pub use crate::lease::Defect;", "lease"),
        (
            "base::name",
            "pub(crate) use crate::{lease::Defect};",
            "lease",
        ),
        (
            "base::name",
            "#[cfg(doc)]\nuse crate::lease::Lease;",
            "lease",
        ),
    ];
    for (m, code, want) in cases {
        let mut g = BTreeMap::new();
        g.insert(m.to_string(), imports(m, &code_only(code), &modules));
        assert!(g[m].contains(want), "{m}: {code:?} -> {:?}", g[m]);
        assert!(!violations(&g).is_empty(), "{m}: {code:?} not refused");
    }
    // A re-export, or an import for the documentation only, names a module but is no dependency of
    // code.
    let code = "pub use crate::lease::Defect;\npub(crate) use crate::stores::etcd;\n#[cfg(doc)]\nuse crate::range;";
    assert!(code_imports("base::name", &code_only(code), &modules).is_empty());
    // Comments and strings are not imports; a store naming the base is fine.
    let code = "// use crate::lease;\nconst U: &str = \"crate::lease\";\nuse crate::base::name;";
    let mut g = BTreeMap::new();
    g.insert(
        "stores::etcd".to_string(),
        imports("stores::etcd", &code_only(code), &modules),
    );
    assert_eq!(
        g["stores::etcd"],
        BTreeSet::from(["base::name".to_string()])
    );
    assert!(violations(&g).is_empty());
}

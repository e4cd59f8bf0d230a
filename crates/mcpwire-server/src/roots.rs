//! The client's roots as a boundary for file paths: the specification asks servers that
//! touch files to stay within the roots the client gave. [`Roots::check`] resolves a path
//! (symbolic links and `..` included) and accepts it only inside one of them.
//!
//! ```ignore
//! #[tool]
//! async fn read_file(path: String, ctx: Context) -> Result<String, HandlerError> {
//!     let path = Roots::of(&ctx).await?.check(&path)?;
//!     std::fs::read_to_string(path).map_err(|e| HandlerError::tool(e.to_string()))
//! }
//! ```

use std::fmt;
use std::path::{Path, PathBuf};

use crate::context::Context;
use crate::error::HandlerError;

/// The local directories the client gave as its roots, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roots {
    paths: Vec<PathBuf>,
}

impl Roots {
    /// Asks the client for its roots (`roots/list`; in 2026-07-28 an `input_required`
    /// round, so propagate the error with `?`). Only `file://` roots count; each is
    /// resolved (a root that does not exist is left out).
    pub async fn of(ctx: &Context) -> Result<Roots, HandlerError> {
        let listed = ctx.list_roots().await?;
        let paths = listed.roots.iter().filter_map(|root| file_path(&root.uri));
        Ok(Self::from_paths(paths))
    }

    /// Roots given as local paths (for tests, or a server's own configuration); each is
    /// resolved, and one that does not exist is left out.
    pub fn from_paths(paths: impl IntoIterator<Item = impl AsRef<Path>>) -> Roots {
        let paths = paths.into_iter().filter_map(|p| std::fs::canonicalize(p.as_ref()).ok()).collect();
        Roots { paths }
    }

    /// The roots, resolved.
    pub fn paths(&self) -> &[PathBuf] {
        &self.paths
    }

    /// Resolves `path` (a relative one against the first root) and returns it if it lies
    /// inside a root. Symbolic links are followed; a path that does not exist yet is
    /// resolved through its nearest existing ancestor, and may not climb with `..` after it.
    pub fn check(&self, path: impl AsRef<Path>) -> Result<PathBuf, RootsError> {
        let asked = path.as_ref();
        let Some(first) = self.paths.first() else {
            return Err(RootsError { path: asked.to_owned(), roots: Vec::new(), kind: Kind::NoRoots });
        };
        let outside = |resolved: Option<PathBuf>| RootsError {
            path: resolved.unwrap_or_else(|| asked.to_owned()),
            roots: self.paths.clone(),
            kind: Kind::Outside,
        };
        let absolute = if asked.is_absolute() { asked.to_owned() } else { first.join(asked) };
        let resolved = resolve(&absolute).ok_or_else(|| outside(None))?;
        match self.paths.iter().any(|root| resolved.starts_with(root)) {
            true => Ok(resolved),
            false => Err(outside(Some(resolved))),
        }
    }
}

/// `path` with symbolic links and `..` resolved: the nearest existing ancestor is
/// canonicalized, and the rest (which does not exist) appended; `None` if the rest climbs.
fn resolve(path: &Path) -> Option<PathBuf> {
    let mut existing = path;
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(existing) {
            let mut resolved = real;
            for part in rest.iter().rev() {
                resolved.push(part);
            }
            return Some(resolved);
        }
        // A missing component followed by `..` (which has no file name) cannot be
        // resolved safely: refused.
        rest.push(existing.file_name()?.to_owned());
        existing = existing.parent()?;
    }
}

/// The local path of a `file://` URI (percent-decoded), or `None` for another scheme.
fn file_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    // `file:///abs` or `file://localhost/abs`.
    let path = rest.strip_prefix("localhost").unwrap_or(rest);
    if !path.starts_with('/') {
        return None;
    }
    Some(PathBuf::from(percent_decode(path)?))
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// A path refused by [`Roots::check`]. Ask with the `is_*` predicates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootsError {
    path: PathBuf,
    roots: Vec<PathBuf>,
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    NoRoots,
    Outside,
}

impl RootsError {
    /// The client gave no local root: no path is allowed.
    pub fn is_no_roots(&self) -> bool {
        self.kind == Kind::NoRoots
    }

    /// The path lies outside every root.
    pub fn is_outside(&self) -> bool {
        self.kind == Kind::Outside
    }

    /// The path refused (resolved, when it could be).
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl fmt::Display for RootsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            Kind::NoRoots => write!(f, "{} is refused: the client gave no local root", self.path.display()),
            Kind::Outside => {
                let roots: Vec<String> = self.roots.iter().map(|r| r.display().to_string()).collect();
                write!(f, "{} is outside the client's roots ({})", self.path.display(), roots.join(", "))
            }
        }
    }
}

impl std::error::Error for RootsError {}

impl From<RootsError> for HandlerError {
    fn from(e: RootsError) -> Self {
        HandlerError::Tool(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory under the system's temporary one, removed at the end.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(name: &str) -> Self {
            let dir = std::env::temp_dir().join(format!("mcp-roots-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            TempDir(std::fs::canonicalize(dir).unwrap())
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn paths_inside_a_root_pass_and_others_do_not() {
        let tmp = TempDir::new("inside");
        let root = tmp.0.join("ab");
        let sibling = tmp.0.join("abc");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::create_dir_all(&sibling).unwrap();
        std::fs::write(root.join("sub/file.txt"), "x").unwrap();
        std::fs::write(sibling.join("secret"), "x").unwrap();
        let roots = Roots::from_paths([&root]);

        assert_eq!(roots.check(root.join("sub/file.txt")).unwrap(), root.join("sub/file.txt"));
        assert_eq!(roots.check("sub/file.txt").unwrap(), root.join("sub/file.txt"), "relative to the first root");
        assert_eq!(roots.check("sub/new.txt").unwrap(), root.join("sub/new.txt"), "a file not written yet");
        let e = roots.check(sibling.join("secret")).unwrap_err();
        assert!(e.is_outside(), "a sibling sharing the root's prefix is outside: {e}");
        assert!(roots.check("../abc/secret").unwrap_err().is_outside(), "climbing out with ..");
        assert!(roots.check("sub/missing/../../../abc/secret").is_err(), ".. after a missing part");
        assert!(roots.check("/etc/passwd").unwrap_err().to_string().contains("outside the client's roots"));
    }

    #[cfg(unix)]
    #[test]
    fn symbolic_links_out_of_a_root_are_refused() {
        let tmp = TempDir::new("links");
        let root = tmp.0.join("root");
        let elsewhere = tmp.0.join("elsewhere");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::fs::write(elsewhere.join("secret"), "x").unwrap();
        std::os::unix::fs::symlink(&elsewhere, root.join("link")).unwrap();
        let roots = Roots::from_paths([&root]);
        assert!(roots.check("link/secret").unwrap_err().is_outside());
        assert!(roots.check("link/new-file").unwrap_err().is_outside(), "nor can a new file be made through it");
    }

    #[test]
    fn without_roots_nothing_passes() {
        let e = Roots::from_paths(Vec::<PathBuf>::new()).check("/tmp").unwrap_err();
        assert!(e.is_no_roots(), "{e}");
        assert_eq!(Roots::from_paths(["/no/such/root"]).paths().len(), 0);
    }

    #[test]
    fn file_uris_are_read_as_paths() {
        assert_eq!(file_path("file:///home/a%20b/x"), Some(PathBuf::from("/home/a b/x")));
        assert_eq!(file_path("file://localhost/srv"), Some(PathBuf::from("/srv")));
        assert_eq!(file_path("https://example.com/x"), None);
        assert_eq!(file_path("file:///bad%zz"), None);
    }
}

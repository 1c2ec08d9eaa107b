//! Tests of [`Store`] on real trees in temporary directories.
//!
//! They run as any user, including root, so read-only-ness is asserted on the mode bits
//! rather than by a write failing (root may write through 0o444).

use std::collections::BTreeSet;
use std::fs::{self, Permissions};
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

use tempfile::TempDir;

use super::*;

fn write(path: &Path, contents: &str, mode: u32) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, contents).unwrap();
    fs::set_permissions(path, Permissions::from_mode(mode)).unwrap();
}

fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().permissions().mode() & 0o7777
}

/// A plugin tree with nested directories, an executable, an empty directory, a relative
/// symlink inside, and git metadata (a `.git` directory at the top, a `.git` file below).
fn sample_tree(git: bool) -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("plugin");
    write(
        &root.join("plugin.yaml"),
        "name: demo\nversion: 1.0.0\n",
        0o644,
    );
    write(&root.join("src/demo/__init__.py"), "VALUE = 1\n", 0o644);
    write(
        &root.join("src/demo/util/deep.py"),
        "def f():\n    return 2\n",
        0o600,
    );
    write(&root.join("bin/run.sh"), "#!/bin/sh\necho hi\n", 0o755);
    fs::create_dir_all(root.join("empty")).unwrap();
    symlink("../src/demo/__init__.py", root.join("bin/init.py")).unwrap();
    if git {
        write(&root.join(".git/HEAD"), "ref: refs/heads/main\n", 0o644);
        write(&root.join(".git/objects/ab/cdef"), "blob", 0o444);
        write(
            &root.join("src/.git"),
            "gitdir: ../.git/modules/src\n",
            0o644,
        );
    }
    (dir, root)
}

/// A temporary directory holding a store; dropping it removes the read-only trees too
/// (`TempDir` alone cannot when the tests run as an ordinary user).
struct StoreDir(TempDir);

impl Drop for StoreDir {
    fn drop(&mut self) {
        let removed = perms::force_remove(self.0.path());
        if !std::thread::panicking() {
            removed.unwrap();
        }
    }
}

fn new_store() -> (StoreDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("pm/store")).unwrap();
    (StoreDir(dir), store)
}

/// Every name in the store root (staging directories included).
fn store_names(store: &Store) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(store.root())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

#[test]
fn identical_trees_from_different_places_share_one_entry() {
    let (_s, store) = new_store();
    let (_a, tree_a) = sample_tree(true);
    let (_b, tree_b) = sample_tree(true);
    let first = store.put(&tree_a).unwrap();
    let second = store.put(&tree_b).unwrap();
    assert_eq!(first, second);
    assert_eq!(first.path, store.root().join(&first.key));
    assert!(first.digest.starts_with("sha256-"));
    assert_eq!(
        Store::key_from_sri(&first.digest).as_deref(),
        Some(&*first.key)
    );
    assert_eq!(store.list().unwrap(), vec![first.key.clone()]);
    assert_eq!(
        store_names(&store),
        vec![first.key.clone()],
        "no staging left"
    );
    assert!(store.contains(&first.key));
    assert!(store.verify(&first.key).unwrap());
}

#[test]
fn stored_tree_is_a_read_only_copy_without_git() {
    let (_s, store) = new_store();
    let (_a, tree) = sample_tree(true);
    let entry = store.put(&tree).unwrap();
    let p = &entry.path;

    assert_eq!(
        fs::read_to_string(p.join("src/demo/util/deep.py")).unwrap(),
        "def f():\n    return 2\n"
    );
    assert_eq!(
        fs::read_link(p.join("bin/init.py")).unwrap(),
        Path::new("../src/demo/__init__.py")
    );
    assert_eq!(
        fs::read_to_string(p.join("bin/init.py")).unwrap(),
        "VALUE = 1\n"
    );
    assert!(fs::read_dir(p.join("empty")).unwrap().next().is_none());
    assert!(!p.join(".git").exists());
    assert!(!p.join("src/.git").exists());

    for dir in ["", "bin", "src", "src/demo", "src/demo/util", "empty"] {
        assert_eq!(mode(&p.join(dir)), 0o555, "{dir}");
    }
    assert_eq!(mode(&p.join("bin/run.sh")), 0o555);
    assert_eq!(mode(&p.join("plugin.yaml")), 0o444);
    assert_eq!(mode(&p.join("src/demo/util/deep.py")), 0o444);

    // The key is the NAR hash of the tree as if `.git` had never been there.
    let (_b, without_git) = sample_tree(false);
    let expected = nar::nix_base32(&nar::nar_sha256(&without_git).unwrap());
    assert_eq!(entry.key, expected);
    assert_eq!(store.put(&without_git).unwrap().key, expected);
}

#[test]
fn one_changed_byte_or_exec_bit_changes_the_key() {
    let (_s, store) = new_store();
    let (_a, base) = sample_tree(true);
    let (_b, byte) = sample_tree(true);
    write(&byte.join("src/demo/__init__.py"), "VALUE = 2\n", 0o644);
    let (_c, exec) = sample_tree(true);
    fs::set_permissions(exec.join("plugin.yaml"), Permissions::from_mode(0o744)).unwrap();
    let (_d, other_mode) = sample_tree(true);
    fs::set_permissions(
        other_mode.join("plugin.yaml"),
        Permissions::from_mode(0o400),
    )
    .unwrap();

    let base = store.put(&base).unwrap();
    let byte = store.put(&byte).unwrap();
    let exec = store.put(&exec).unwrap();
    let other_mode = store.put(&other_mode).unwrap();
    assert_ne!(base.key, byte.key);
    assert_ne!(base.key, exec.key);
    assert_ne!(byte.key, exec.key);
    assert_eq!(mode(&exec.path.join("plugin.yaml")), 0o555);
    // Mode bits other than exec are not content.
    assert_eq!(base.key, other_mode.key);
    assert_eq!(store.list().unwrap().len(), 3);
}

#[test]
fn escaping_symlink_is_refused_and_nothing_is_left() {
    let (_s, store) = new_store();
    let (_a, tree) = sample_tree(true);
    symlink("../../etc/passwd", tree.join("bin/x")).unwrap();
    let err = store.put(&tree).unwrap_err();
    assert!(matches!(err, StoreError::EscapingSymlink { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "symlink {} points outside the plugin tree (../../etc/passwd)",
            tree.join("bin/x").display()
        )
    );
    assert!(store_names(&store).is_empty());
}

#[test]
fn absolute_symlink_is_refused_and_nothing_is_left() {
    let (_s, store) = new_store();
    let (_a, tree) = sample_tree(true);
    // Even one pointing into the tree itself: the copy would not.
    symlink(tree.join("plugin.yaml"), tree.join("src/demo/abs")).unwrap();
    let err = store.put(&tree).unwrap_err();
    assert!(matches!(err, StoreError::AbsoluteSymlink { .. }), "{err:?}");
    let message = err.to_string();
    assert!(
        message.contains(&*tree.join("src/demo/abs").to_string_lossy()),
        "{message}"
    );
    assert!(store_names(&store).is_empty());
}

#[test]
fn chained_symlink_escape_is_refused() {
    // `up -> ..` is fine on its own, but `l -> up/..` would resolve to the tree's parent.
    let (_s, store) = new_store();
    let (_a, tree) = sample_tree(false);
    symlink("..", tree.join("src/up")).unwrap();
    symlink("src/up/..", tree.join("l")).unwrap();
    let err = store.put(&tree).unwrap_err();
    assert!(
        matches!(err, StoreError::UnnormalizedSymlink { .. }),
        "{err:?}"
    );
    assert!(store_names(&store).is_empty());
}

#[test]
fn sockets_are_refused_and_nothing_is_left() {
    let (_s, store) = new_store();
    let (_a, tree) = sample_tree(false);
    let sock = tree.join("src/demo/util/agent.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let err = store.put(&tree).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{} is a socket; only regular files, directories and symlinks can be stored",
            sock.display()
        )
    );
    assert!(store_names(&store).is_empty());
}

#[test]
fn put_of_a_file_or_nothing_is_an_error() {
    let (_s, store) = new_store();
    let (_a, tree) = sample_tree(false);
    let err = store.put(&tree.join("plugin.yaml")).unwrap_err();
    assert!(matches!(err, StoreError::NotADirectory { .. }), "{err:?}");
    let err = store.put(&tree.join("missing")).unwrap_err();
    assert!(err.to_string().contains("missing"), "{err}");
    assert!(store_names(&store).is_empty());
}

#[test]
fn a_tree_holding_the_store_is_refused() {
    let (dir, store) = new_store();
    let home = dir.0.path();
    write(&home.join("plugin.yaml"), "name: home\n", 0o644);
    for src in [
        home.to_path_buf(),
        home.join("pm"),
        store.root().to_path_buf(),
    ] {
        let err = store.put(&src).unwrap_err();
        assert!(matches!(err, StoreError::ContainsStore { .. }), "{err:?}");
    }
    assert!(store_names(&store).is_empty());
}

#[test]
fn gc_keeps_what_is_kept_and_removes_the_rest() {
    let (_s, store) = new_store();
    let mut keys = Vec::new();
    for version in ["1", "2", "3"] {
        let (_t, tree) = sample_tree(false);
        write(&tree.join("VERSION"), version, 0o644);
        keys.push(store.put(&tree).unwrap().key);
    }
    // A stale staging directory with a read-only tree inside, and a foreign name.
    let stale = store.root().join(".tmp-stale");
    write(&stale.join("a/b"), "x", 0o444);
    perms::seal(&stale).unwrap();
    fs::write(store.root().join("README"), "not a key").unwrap();

    let keep: BTreeSet<String> = [keys[1].clone()].into();
    let removed = store.gc(&keep).unwrap();
    let mut expected = vec![keys[0].clone(), keys[2].clone()];
    expected.sort();
    assert_eq!(removed, expected);
    assert_eq!(store.list().unwrap(), vec![keys[1].clone()]);
    assert_eq!(
        store_names(&store),
        vec![keys[1].clone(), "README".to_string()]
    );
    assert!(store.verify(&keys[1]).unwrap());
    assert!(!store.contains(&keys[0]));
    assert!(store.gc(&keep).unwrap().is_empty());
}

#[test]
fn verify_detects_a_tampered_file() {
    let (_s, store) = new_store();
    let (_a, tree) = sample_tree(true);
    let entry = store.put(&tree).unwrap();
    assert!(store.verify(&entry.key).unwrap());
    let file = entry.path.join("src/demo/__init__.py");
    let rewrite = |contents: &str| {
        fs::set_permissions(&file, Permissions::from_mode(0o644)).unwrap();
        fs::write(&file, contents).unwrap();
        fs::set_permissions(&file, Permissions::from_mode(0o444)).unwrap();
    };
    rewrite("VALUE = 3\n");
    assert!(!store.verify(&entry.key).unwrap());
    rewrite("VALUE = 1\n");
    assert!(store.verify(&entry.key).unwrap(), "restored");
    // A changed exec bit alone is tampering too.
    fs::set_permissions(&file, Permissions::from_mode(0o555)).unwrap();
    assert!(!store.verify(&entry.key).unwrap());
}

#[test]
fn keys_are_checked_before_touching_the_filesystem() {
    let (_s, store) = new_store();
    let err = store.verify("../../etc").unwrap_err();
    assert!(matches!(err, StoreError::BadKey { .. }), "{err:?}");
    assert!(!store.contains("../../etc"));
    let absent = nar::nix_base32(&[7; 32]);
    let err = store.verify(&absent).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{} is not in the store", store.path_of(&absent).display())
    );
    assert!(!store.contains(&absent));
    assert_eq!(Store::key_from_sri("sha256-short"), None);
    assert_eq!(Store::key_from_sri("md5-1B2M2Y8AsgTpgAmY7PhCfg=="), None);
}

#[test]
fn a_tree_that_will_be_refused_is_refused_before_anything_is_copied() {
    let src = tempfile::tempdir().unwrap();
    for i in 0..200 {
        write(&src.path().join(format!("a{i:04}.py")), "x = 1\n", 0o644);
    }
    // Sorted last: a copy that checked as it went would have copied the 200 files first.
    symlink("../../etc/passwd", src.path().join("zz-escape")).unwrap();
    let dst = tempfile::tempdir().unwrap();
    let staged = dst.path().join("package");
    let err = stage_copy(src.path(), &staged).unwrap_err();
    assert!(matches!(err, StoreError::EscapingSymlink { .. }), "{err}");
    assert_eq!(
        fs::read_dir(&staged).unwrap().count(),
        0,
        "files were copied"
    );
}

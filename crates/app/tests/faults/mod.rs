//! Faults of a SQLite store's file, made for real: unwritable (the way that works for the user the tests run
//! as), shared by the store and server fault tests (`tests/store_faults.rs` of steward-app and
//! steward-server).
//!
//! An ordinary user makes the file unwritable with `chmod a-w` (file, `-wal` and directory). Root ignores
//! file modes (writes go through, checked: a file created in a `chmod 555` directory), so for root the files
//! and the directory are made immutable instead (`chattr +i`, which stops root too: open for writing,
//! `write(2)` on a descriptor opened before, creating a file in the directory all fail with EPERM). `-shm`
//! is left alone either way: SQLite maps it into memory, and a store through a mapping of an immutable file
//! may be SIGBUS; the `-wal` and the file are enough for SQLite to refuse to write.
//!
//! To try the `chmod` way as root, run the test binary without the capability that lets root ignore modes:
//! `setpriv --inh-caps=-dac_override,-dac_read_search --bounding-set=-dac_override,-dac_read_search -- \
//! target/debug/deps/store_faults-… sqlite`.
#![allow(
    dead_code,
    unreachable_pub,
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// How the files were made unwritable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum How {
    /// `chmod a-w`.
    Chmod,
    /// `chattr +i`.
    Immutable,
}

/// A store file made unwritable; [`Unwritable::restore`] (or dropping it) undoes it, so a failed test never
/// leaves immutable files in the target directory.
#[derive(Debug)]
pub struct Unwritable {
    /// The file, its `-wal` when there is one, then its directory.
    paths: Vec<PathBuf>,
    pub how: How,
    restored: bool,
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn chattr(flag: &str, path: &Path) -> bool {
    Command::new("chattr")
        .arg(flag)
        .arg(path)
        .status()
        .is_ok_and(|s| s.success())
}

/// True when a file can be created in `dir` (then removed).
fn can_create_in(dir: &Path) -> bool {
    let probe = dir.join(".steward-write-probe");
    let made = std::fs::write(&probe, b"x").is_ok();
    let _ = std::fs::remove_file(&probe);
    made
}

impl Unwritable {
    /// Makes the SQLite file at `file` unwritable; `None` when neither way works here (the caller skips).
    pub fn apply(file: &Path) -> Option<Self> {
        let dir = file.parent().unwrap().to_owned();
        let mut wal = file.as_os_str().to_owned();
        wal.push("-wal");
        let wal = PathBuf::from(wal);
        let mut paths = vec![file.to_owned()];
        if wal.exists() {
            paths.push(wal);
        }
        paths.push(dir.clone());
        chmod(&dir, 0o555);
        if !can_create_in(&dir) {
            for path in &paths[..paths.len() - 1] {
                chmod(path, 0o444);
            }
            eprintln!(
                "made {} unwritable with chmod a-w (file, -wal, directory)",
                file.display()
            );
            return Some(Self {
                paths,
                how: How::Chmod,
                restored: false,
            });
        }
        // Root: modes do not stop it.
        chmod(&dir, 0o755);
        let mut done: Vec<PathBuf> = Vec::new();
        for path in &paths {
            if !chattr("+i", path) {
                for path in &done {
                    chattr("-i", path);
                }
                return None;
            }
            done.push(path.clone());
        }
        if can_create_in(&dir) {
            for path in &paths {
                chattr("-i", path);
            }
            return None;
        }
        eprintln!(
            "made {} unwritable with chattr +i (file, -wal, directory): the tests run as root",
            file.display()
        );
        Some(Self {
            paths,
            how: How::Immutable,
            restored: false,
        })
    }

    /// Makes the files writable again.
    pub fn restore(mut self) {
        self.undo();
    }

    fn undo(&mut self) {
        if self.restored {
            return;
        }
        self.restored = true;
        for path in self.paths.iter().rev() {
            match self.how {
                How::Chmod => chmod(path, if path.is_dir() { 0o755 } else { 0o644 }),
                How::Immutable => {
                    chattr("-i", path);
                }
            }
        }
    }
}

impl Drop for Unwritable {
    fn drop(&mut self) {
        self.undo();
    }
}

/// A TCP proxy in front of a database server, which can be stopped (connections end, new ones are refused,
/// as from a server that stopped) and started again on the same port, without touching the server, which
/// other tests share.
pub struct Proxy {
    pub port: u16,
    target: String,
    inner: std::sync::Arc<ProxyInner>,
    accept: Option<std::thread::JoinHandle<()>>,
}

#[derive(Default)]
struct ProxyInner {
    up: std::sync::atomic::AtomicBool,
    connections: std::sync::Mutex<Vec<std::net::TcpStream>>,
}

impl Proxy {
    /// A proxy on a free port of 127.0.0.1 to `target` (`host:port`), up.
    pub fn start(target: &str) -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let mut proxy = Self {
            port,
            target: target.to_owned(),
            inner: std::sync::Arc::default(),
            accept: None,
        };
        proxy.serve(listener);
        proxy
    }

    fn serve(&mut self, listener: std::net::TcpListener) {
        use std::sync::atomic::Ordering;
        listener.set_nonblocking(true).unwrap();
        self.inner.up.store(true, Ordering::SeqCst);
        let inner = self.inner.clone();
        let target = self.target.clone();
        self.accept = Some(std::thread::spawn(move || {
            while inner.up.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((client, _)) => {
                        client.set_nonblocking(false).unwrap();
                        let Ok(server) = std::net::TcpStream::connect(&target) else {
                            continue;
                        };
                        let mut kept = inner.connections.lock().unwrap();
                        kept.push(client.try_clone().unwrap());
                        kept.push(server.try_clone().unwrap());
                        for (mut from, mut to) in [
                            (client.try_clone().unwrap(), server.try_clone().unwrap()),
                            (server, client),
                        ] {
                            std::thread::spawn(move || {
                                let _ = std::io::copy(&mut from, &mut to);
                                let _ = to.shutdown(std::net::Shutdown::Both);
                            });
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(std::time::Duration::from_millis(5));
                    }
                    Err(_) => break,
                }
            }
        }));
    }

    /// Stops: every connection through it ends, and connecting to its port is refused.
    pub fn stop(&mut self) {
        self.inner
            .up
            .store(false, std::sync::atomic::Ordering::SeqCst);
        if let Some(accept) = self.accept.take() {
            accept.join().unwrap();
        }
        for connection in self.inner.connections.lock().unwrap().drain(..) {
            let _ = connection.shutdown(std::net::Shutdown::Both);
        }
    }

    /// Starts again on the same port.
    pub fn restart(&mut self) {
        let listener = std::net::TcpListener::bind(("127.0.0.1", self.port)).unwrap();
        self.serve(listener);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop();
    }
}

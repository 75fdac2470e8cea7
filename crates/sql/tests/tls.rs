//! TLS at the default `sslmode` on loopback: a URL that says nothing about TLS connects plain first (a TLS
//! handshake costs ~90 ms there, sqlx setting no TCP_NODELAY), yet a server that accepts only TLS (pg_hba
//! `hostssl`) is still reached, over TLS; an explicit `sslmode` is always obeyed.
//!
//! The TLS-only server is a scratch cluster made with `initdb` (Debian's `/usr/lib/postgresql/*/bin`) and the
//! snakeoil certificate, run as the `postgres` user; without them the test prints SKIPPED (fails under CI=true).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use steward_sql::{Database, QueryLimits, cell_text};

/// Whether this connection is encrypted, as the server sees it.
async fn encrypted(db: &Database) -> bool {
    let result = db
        .query_read_only(
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
            &QueryLimits::default(),
        )
        .await
        .unwrap();
    cell_text(&result.rows[0][0]) == "true"
}

#[tokio::test]
async fn loopback_without_sslmode_is_plain_and_an_explicit_sslmode_is_obeyed() {
    let Ok(db) = Database::connect(common::PG_ADMIN).await else {
        return common::skip("PostgreSQL at 127.0.0.1:5432 is not usable");
    };
    let server_has_tls = db
        .query_read_only("SHOW ssl", &[], &QueryLimits::default())
        .await
        .is_ok_and(|r| cell_text(&r.rows[0][0]) == "on");
    assert!(!encrypted(&db).await);
    db.close().await;
    if !server_has_tls {
        return common::skip("PostgreSQL at 127.0.0.1:5432 has ssl = off");
    }
    let db = Database::connect(&format!("{}?sslmode=require", common::PG_ADMIN))
        .await
        .unwrap();
    assert!(encrypted(&db).await);
    db.close().await;
    let db = Database::connect(&format!("{}?sslmode=prefer", common::PG_ADMIN))
        .await
        .unwrap();
    assert!(encrypted(&db).await);
    db.close().await;
}

/// A scratch PostgreSQL cluster that accepts TCP connections over TLS only; stopped when dropped.
struct TlsOnly {
    dir: PathBuf,
    bin: PathBuf,
    port: u16,
}

impl TlsOnly {
    fn start() -> Result<Self, String> {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .map_err(|e| format!("no /usr/lib/postgresql: {e}"))?
            .filter_map(Result::ok)
            .map(|e| e.path().join("bin"))
            .find(|b| b.join("initdb").is_file())
            .ok_or("no initdb under /usr/lib/postgresql")?;
        let cert = Path::new("/etc/ssl/certs/ssl-cert-snakeoil.pem");
        let key = Path::new("/etc/ssl/private/ssl-cert-snakeoil.key");
        if !cert.is_file() || !key.exists() {
            return Err("no snakeoil certificate (apt-get install ssl-cert)".into());
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "pg-tls-{}-{}",
            std::process::id(),
            common::unique()
        ));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let cluster = Self { dir, bin, port };
        cluster.run(&["chown", "postgres", &cluster.path("")], false)?;
        cluster.run(
            &[
                &cluster.tool("initdb"),
                "-D",
                &cluster.path("data"),
                "-A",
                "trust",
                "-U",
                "postgres",
            ],
            true,
        )?;
        let conf = format!(
            "port = {port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{}'\nssl = on\n\
             ssl_cert_file = '{}'\nssl_key_file = '{}'\n",
            cluster.path(""),
            cert.display(),
            key.display()
        );
        let append = |name: &str, text: &str, replace: bool| {
            let path = cluster.dir.join("data").join(name);
            let old = if replace {
                String::new()
            } else {
                std::fs::read_to_string(&path).unwrap_or_default()
            };
            std::fs::write(&path, old + text).map_err(|e| e.to_string())
        };
        append("postgresql.conf", &conf, false)?;
        append(
            "pg_hba.conf",
            "local all all trust\nhostssl all all 127.0.0.1/32 trust\n",
            true,
        )?;
        cluster.run(
            &[
                &cluster.tool("pg_ctl"),
                "-D",
                &cluster.path("data"),
                "-l",
                &cluster.path("log"),
                "-w",
                "start",
            ],
            true,
        )?;
        Ok(cluster)
    }

    fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }

    fn tool(&self, name: &str) -> String {
        self.bin.join(name).display().to_string()
    }

    /// Runs a command, as the `postgres` user when `as_postgres` and this process is root.
    fn run(&self, args: &[&str], as_postgres: bool) -> Result<(), String> {
        let root = Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|o| o.stdout.starts_with(b"0"));
        let mut command = if as_postgres && root {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).args(args);
            c
        } else if !as_postgres && !root {
            return Ok(());
        } else {
            let mut c = Command::new(args[0]);
            c.args(&args[1..]);
            c
        };
        let output = command.output().map_err(|e| format!("{}: {e}", args[0]))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{} failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&output.stderr)
            ))
        }
    }
}

impl Drop for TlsOnly {
    fn drop(&mut self) {
        let _ = self.run(
            &[
                &self.tool("pg_ctl"),
                "-D",
                &self.path("data"),
                "-m",
                "immediate",
                "stop",
            ],
            true,
        );
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[tokio::test]
async fn a_server_that_requires_tls_is_reached_over_tls() {
    let cluster = match TlsOnly::start() {
        Ok(cluster) => cluster,
        Err(e) => return common::skip(&format!("no TLS-only scratch PostgreSQL: {e}")),
    };
    let url = format!("postgres://postgres@127.0.0.1:{}/postgres", cluster.port);
    let db = Database::connect(&url).await.unwrap();
    assert!(encrypted(&db).await);
    db.close().await;
    // Explicitly without TLS: refused, and said so.
    let e = Database::connect(&format!("{url}?sslmode=disable"))
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("no encryption"), "{e}");
    drop(cluster);
}

//! The engines' own command-line clients (`psql`, `mariadb`, `sqlite3`) as references: run a query, read back
//! each cell exactly (NULL told apart from the text `NULL`, bytes as bytes), and compare a cell of `steward sql
//! run --json` with it.
#![allow(
    dead_code,
    unreachable_pub,
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use std::process::{Command, Stdio};

use serde_json::Value;

/// One cell as a client printed it.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Null,
    Bytes(Vec<u8>),
}

impl Cell {
    pub fn show(&self) -> String {
        match self {
            Cell::Null => "NULL".to_owned(),
            Cell::Bytes(b) => format!("{:?}", String::from_utf8_lossy(b)),
        }
    }
}

/// True when `program` runs (`--version`).
pub fn available(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn run(command: &mut Command, input: Option<&str>) -> Result<Vec<u8>, String> {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().map_err(|e| e.to_string())?;
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        if let Some(input) = input {
            stdin
                .write_all(input.as_bytes())
                .map_err(|e| e.to_string())?;
        }
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(out.stdout)
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
    }
}

const PSQL_NULL: &str = "\u{1}NULL\u{1}";

fn psql_command(url: &str) -> Command {
    let mut c = Command::new("psql");
    c.args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url])
        .env("PGCLIENTENCODING", "UTF8");
    c
}

/// Runs a script with `psql`.
pub fn psql_script(url: &str, script: &str) -> Result<(), String> {
    run(psql_command(url).args(["-f", "-"]), Some(script)).map(|_| ())
}

/// The rows of `sql` as `psql` prints them (unaligned, no headers; unit and record separators, a null marker).
pub fn psql(url: &str, sql: &str) -> Result<Vec<Vec<Cell>>, String> {
    let out = run(
        psql_command(url).args([
            "-A",
            "-t",
            "-P",
            &format!("null={PSQL_NULL}"),
            "-F",
            "\u{1f}",
            "-R",
            "\u{1e}",
            "-c",
            sql,
        ]),
        None,
    )?;
    if out.is_empty() {
        return Ok(Vec::new());
    }
    // psql ends the last record with a newline of its own.
    let body = out.strip_suffix(b"\n").unwrap_or(&out);
    Ok(body
        .split(|b| *b == 0x1e)
        .map(|record| {
            record
                .split(|b| *b == 0x1f)
                .map(|field| {
                    if field == PSQL_NULL.as_bytes() {
                        Cell::Null
                    } else {
                        Cell::Bytes(field.to_vec())
                    }
                })
                .collect()
        })
        .collect())
}

fn mariadb_command(url: &MariaUrl) -> Command {
    let mut c = Command::new("mariadb");
    c.args([
        "--no-defaults",
        "-h",
        &url.host,
        "-P",
        &url.port,
        "-u",
        &url.user,
        "--default-character-set=utf8mb4",
    ]);
    if let Some(db) = &url.database {
        c.arg(db);
    }
    c
}

/// The parts of a `mysql://user@host:port/db` URL the client needs (no password: the test server has none).
#[derive(Clone, Debug)]
pub struct MariaUrl {
    pub user: String,
    pub host: String,
    pub port: String,
    pub database: Option<String>,
}

impl MariaUrl {
    pub fn parse(url: &str) -> MariaUrl {
        let rest = url.strip_prefix("mysql://").unwrap();
        let (user, rest) = rest.split_once('@').unwrap();
        let (address, database) = rest.split_once('/').unwrap_or((rest, ""));
        let (host, port) = address.split_once(':').unwrap_or((address, "3306"));
        MariaUrl {
            user: user.to_owned(),
            host: host.to_owned(),
            port: port.to_owned(),
            database: (!database.is_empty()).then(|| database.to_owned()),
        }
    }
}

/// Runs a script with `mariadb`.
pub fn mariadb_script(url: &MariaUrl, script: &str) -> Result<(), String> {
    run(&mut mariadb_command(url), Some(script)).map(|_| ())
}

/// The rows of `sql` as `mariadb --batch` prints them, unescaped (`\0`, `\t`, `\n`, `\\`), with NULLs found
/// in the `--xml` output (where the text `NULL` and a NULL differ).
pub fn mariadb(url: &MariaUrl, sql: &str) -> Result<Vec<Vec<Cell>>, String> {
    let batch = run(
        mariadb_command(url).args(["--batch", "--skip-column-names", "-e", sql]),
        None,
    )?;
    let xml = run(mariadb_command(url).args(["--xml", "-e", sql]), None)?;
    let xml = String::from_utf8_lossy(&xml);
    let nulls: Vec<Vec<bool>> = xml
        .split("<row>")
        .skip(1)
        .map(|row| {
            row.split("<field ")
                .skip(1)
                .map(|field| {
                    field
                        .split('>')
                        .next()
                        .unwrap_or("")
                        .contains("xsi:nil=\"true\"")
                })
                .collect()
        })
        .collect();
    let lines: Vec<&[u8]> = if batch.is_empty() {
        Vec::new()
    } else {
        batch
            .strip_suffix(b"\n")
            .unwrap_or(&batch)
            .split(|b| *b == b'\n')
            .collect()
    };
    if lines.len() != nulls.len() {
        return Err(format!(
            "batch and xml outputs disagree: {} and {} rows",
            lines.len(),
            nulls.len()
        ));
    }
    Ok(lines
        .iter()
        .zip(nulls)
        .map(|(line, nulls)| {
            line.split(|b| *b == b'\t')
                .zip(nulls.into_iter().chain(std::iter::repeat(false)))
                .map(|(field, null)| {
                    if null {
                        Cell::Null
                    } else {
                        Cell::Bytes(unescape_batch(field))
                    }
                })
                .collect()
        })
        .collect())
}

fn unescape_batch(field: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(field.len());
    let mut k = 0;
    while let Some(&b) = field.get(k) {
        if b == b'\\'
            && let Some(&next) = field.get(k + 1)
        {
            out.push(match next {
                b'0' => 0,
                b't' => b'\t',
                b'n' => b'\n',
                other => other,
            });
            k += 2;
            continue;
        }
        out.push(b);
        k += 1;
    }
    out
}

/// Runs a script with `sqlite3` on `file`.
pub fn sqlite3_script(file: &str, script: &str) -> Result<(), String> {
    run(Command::new("sqlite3").args(["-bail", file]), Some(script)).map(|_| ())
}

/// The rows of `sql` as `sqlite3` prints them in `.mode quote`: `NULL`, numbers (REAL with 20 significant
/// digits), `Inf`, `'text'` (quotes doubled) and `X'hex'` for blobs (decoded to their bytes).
pub fn sqlite3(file: &str, sql: &str) -> Result<Vec<Vec<Cell>>, String> {
    let out = run(
        Command::new("sqlite3").args([
            "-bail",
            "-init",
            "/dev/null",
            "-cmd",
            ".mode quote",
            file,
            sql,
        ]),
        None,
    )?;
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut k = 0;
    while k < out.len() {
        let (cell, next) = quote_token(&out, k)?;
        row.push(cell);
        k = next;
        match out.get(k) {
            Some(b',') => k += 1,
            Some(b'\n') | None => {
                rows.push(std::mem::take(&mut row));
                k += 1;
            }
            Some(other) => return Err(format!("unexpected {:?} at {k}", char::from(*other))),
        }
    }
    Ok(rows)
}

/// One value of `.mode quote` output starting at `k`, and where it ends.
fn quote_token(out: &[u8], mut k: usize) -> Result<(Cell, usize), String> {
    if out.get(k) == Some(&b'\'') {
        let mut text = Vec::new();
        k += 1;
        loop {
            match (out.get(k), out.get(k + 1)) {
                (Some(b'\''), Some(b'\'')) => {
                    text.push(b'\'');
                    k += 2;
                }
                (Some(b'\''), _) => return Ok((Cell::Bytes(text), k + 1)),
                (Some(c), _) => {
                    text.push(*c);
                    k += 1;
                }
                (None, _) => return Err("unterminated text".to_owned()),
            }
        }
    }
    if out.get(k) == Some(&b'X') && out.get(k + 1) == Some(&b'\'') {
        let start = k + 2;
        let len = out[start..]
            .iter()
            .position(|c| *c == b'\'')
            .ok_or("unterminated blob")?;
        let hex = std::str::from_utf8(&out[start..start + len]).map_err(|e| e.to_string())?;
        let bytes = unhex(&format!("\\x{hex}")).ok_or("bad blob")?;
        return Ok((Cell::Bytes(bytes), start + len + 1));
    }
    let len = out[k..]
        .iter()
        .position(|c| *c == b',' || *c == b'\n')
        .unwrap_or(out.len() - k);
    let token = &out[k..k + len];
    let cell = if token == b"NULL" {
        Cell::Null
    } else {
        Cell::Bytes(token.to_vec())
    };
    Ok((cell, k + len))
}

/// Decodes `\x` and hex digits.
fn unhex(s: &str) -> Option<Vec<u8>> {
    let hex = s.strip_prefix("\\x")?;
    if hex.len() % 2 != 0 {
        return None;
    }
    (0..hex.len() / 2)
        .map(|i| u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok())
        .collect()
}

/// Whether steward's cell `ours` (of engine type `type_name`) says exactly what the client printed: a number
/// equal to the client's number, a boolean for `t`/`f`, JSON equal to the client's JSON, a string equal byte for
/// byte, or `\x` hex equal to the client's bytes.
pub fn same(ours: &Value, theirs: &Cell, type_name: &str) -> bool {
    let bytes = match theirs {
        Cell::Null => return ours.is_null(),
        Cell::Bytes(bytes) => bytes,
    };
    let text = String::from_utf8_lossy(bytes);
    match ours {
        Value::Null => false,
        Value::Bool(b) => text == if *b { "t" } else { "f" } || text == if *b { "1" } else { "0" },
        Value::Number(n) => {
            if type_name.eq_ignore_ascii_case("BIT") {
                let v = bytes
                    .iter()
                    .fold(0u128, |acc, b| (acc << 8) | u128::from(*b));
                return n.as_u64().map(u128::from) == Some(v);
            }
            if let (Some(ours), Ok(theirs)) = (n.as_i64(), text.parse::<i128>()) {
                return i128::from(ours) == theirs;
            }
            if let (Some(ours), Ok(theirs)) = (n.as_u64(), text.parse::<i128>()) {
                return i128::from(ours) == theirs;
            }
            match (n.as_f64(), text.parse::<f64>()) {
                (Some(ours), Ok(theirs)) => ours == theirs,
                _ => false,
            }
        }
        Value::String(s) => {
            s.as_bytes() == bytes.as_slice() || unhex(s).is_some_and(|b| &b == bytes)
        }
        json => serde_json::from_slice::<Value>(bytes).is_ok_and(|theirs| &theirs == json),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn comparisons_are_type_aware() {
        let b = |s: &str| Cell::Bytes(s.as_bytes().to_vec());
        assert!(same(&json!(1), &b("1"), "INT4"));
        assert!(!same(&json!(1), &b("1.5"), "INT4"));
        assert!(same(&json!(0.1), &b("0.10000000000000000555"), "REAL"));
        assert!(!same(&json!(0.1), &b("0.1000001"), "REAL"));
        assert!(same(&json!(true), &b("t"), "BOOL"));
        assert!(same(
            &json!("\\x00ff"),
            &Cell::Bytes(vec![0, 0xff]),
            "BYTEA"
        ));
        assert!(same(&json!("\\x00ff"), &b("\\x00ff"), "BYTEA"));
        assert!(!same(&json!("a"), &b("b"), "TEXT"));
        assert!(same(&json!({"a": 1}), &b("{\"a\" : 1}"), "JSON"));
        assert!(same(&json!(5), &Cell::Bytes(vec![0, 5]), "BIT"));
        assert!(!same(&Value::Null, &b("NULL"), "TEXT"));
        assert!(same(&Value::Null, &Cell::Null, "TEXT"));
    }
}

//! The official MCP Python SDK, in a virtual environment the tests make once and keep under `target/`, and
//! `client.py`, which drives a server with it. Shared by `steward-server`'s HTTP test and the `steward` binary's
//! stdio test (`#[path]`).
#![allow(
    dead_code,
    unreachable_pub,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The SDK version the tests pin; the virtual environment is keyed by it.
pub const MCP_VERSION: &str = "2.3.0";

/// The client script.
pub fn client_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../server/tests/mcp/client.py")
        .canonicalize()
        .expect("crates/server/tests/mcp/client.py")
}

/// The OpenAI Python SDK version the `/v1` tests pin.
pub const OPENAI_VERSION: &str = "3.57.0";

/// Says why the Python side cannot run: SKIPPED (loudly) on a developer's machine, a failure under `CI=true`.
fn skip(package: &str, why: &str) -> Option<PathBuf> {
    if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
        panic!("these tests need Python with the `{package}` package (CI=true: required): {why}");
    }
    eprintln!("\n*** SKIPPED: the {package} client tests need python3 and pip: {why} ***\n");
    None
}

/// The venv's Python with `mcp` installed, made on first use under `target/tmp` (`None`: skipped, said).
pub fn python() -> Option<PathBuf> {
    python_with("mcp", MCP_VERSION)
}

/// The venv's Python with the official OpenAI SDK installed (`None`: skipped, said).
pub fn openai_python() -> Option<PathBuf> {
    python_with("openai", OPENAI_VERSION)
}

/// A venv's Python with `package==version` installed, made on first use under `target/tmp` and kept there.
pub fn python_with(package: &str, version: &str) -> Option<PathBuf> {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let venv = root.join(format!("{package}-python-{version}"));
    let python = venv.join("bin/python");
    // Tests of one binary run on several threads: one of them makes the venv, the others wait for it.
    static MAKING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _making = MAKING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if venv.join("ready").is_file() {
        return Some(python);
    }
    // Built aside and renamed into place, so that two test binaries starting at once never share a half-made
    // one.
    let building = root.join(format!("{package}-python-{version}.{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&building);
    std::fs::create_dir_all(&root).unwrap();
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&building)
        .output();
    match made {
        Err(e) => return skip(package, &format!("python3 cannot be run: {e}")),
        Ok(out) if !out.status.success() => {
            return skip(
                package,
                &format!(
                    "python3 -m venv failed: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ),
            );
        }
        Ok(_) => {}
    }
    let pip = Command::new(building.join("bin/python"))
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .arg(format!("{package}=={version}"))
        .output();
    match pip {
        Err(e) => return skip(package, &format!("pip cannot be run: {e}")),
        Ok(out) if !out.status.success() => {
            let _ = std::fs::remove_dir_all(&building);
            return skip(
                package,
                &format!(
                    "pip install {package}=={version} failed: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ),
            );
        }
        Ok(_) => {}
    }
    std::fs::write(building.join("ready"), version).unwrap();
    if std::fs::rename(&building, &venv).is_err() {
        // Another test made it first.
        let _ = std::fs::remove_dir_all(&building);
        assert!(
            venv.join("ready").is_file(),
            "{} is incomplete",
            venv.display()
        );
    }
    Some(python)
}

/// Runs `client.py` with `args` (`stdio COMMAND…` or `http URL`) and `plan`, with only `PATH` and `env` in its
/// environment (a server it starts gets the same); returns what it printed. Fails after two minutes.
pub fn run_client(python: &Path, args: &[&str], plan: &Value, env: &[(&str, &str)]) -> Value {
    let mut child = Command::new(python)
        .arg(client_script())
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the MCP client");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(plan.to_string().as_bytes())
        .unwrap();
    // Read as it comes, so that a long answer never fills a pipe the client then waits on.
    let read = |mut pipe: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let stdout = read(Box::new(child.stdout.take().unwrap()));
    let stderr = read(Box::new(child.stderr.take().unwrap()));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("the MCP client did not finish within two minutes");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (stdout, stderr) = (stdout.join().unwrap(), stderr.join().unwrap());
    assert!(status.success(), "the MCP client failed:\n{stderr}");
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"))
}

/// The tool named `name` in a client's answer.
pub fn tool<'a>(answer: &'a Value, name: &str) -> &'a Value {
    answer["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no tool {name} in {}", answer["tools"]))
}

/// The names of the tools in a client's answer.
pub fn tool_names(answer: &Value) -> Vec<String> {
    answer["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

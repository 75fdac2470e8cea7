//! The real-model tier: SmolLM2-135M-Instruct served by llama.cpp's OpenAI-compatible server
//! (llama-cpp-python), a real model on this machine's CPU, driving Steward end to end — `ask` (tool calling and
//! ReAct-JSON) and `serve`'s `/v1`. A model this small is often wrong; what is checked is that Steward works
//! with it: no run ends in a protocol or server error (an HTTP error, a timeout); each ends with an answer or a
//! clear outcome.
//!
//! `eval "$(bash scripts/models)"` fetches the model and builds the server once and says where they are
//! (`STEWARD_TEST_GGUF`, `STEWARD_TEST_LLAMA_SERVER`); without them these tests say SKIPPED, and fail under
//! CI=true.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::{Value, json};

/// llama.cpp's server on a free port, stopped when dropped.
struct LlamaServer {
    child: std::process::Child,
    base: String,
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the real model's server, or says SKIPPED (fails under CI=true) when the tier is not set up.
fn llama_server() -> Option<LlamaServer> {
    let gguf = std::env::var("STEWARD_TEST_GGUF")
        .ok()
        .filter(|p| std::path::Path::new(p).is_file());
    let python = std::env::var("STEWARD_TEST_LLAMA_SERVER")
        .ok()
        .filter(|p| std::path::Path::new(p).is_file());
    let (Some(gguf), Some(python)) = (gguf, python) else {
        if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
            panic!(
                "the real-model tier is not set up (CI=true: required): eval \"$(bash scripts/models)\""
            );
        }
        eprintln!(
            "SKIPPED: the real-model tier is not set up: eval \"$(bash scripts/models)\" first"
        );
        return None;
    };
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = std::process::Command::new(python)
        .args([
            "-m",
            "llama_cpp.server",
            "--model",
            &gguf,
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "--n_ctx",
            "8192",
            "--chat_format",
            "chatml-function-calling",
            "--model_alias",
            "smollm2",
            "--seed",
            "42",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let server = LlamaServer {
        child,
        base: format!("http://127.0.0.1:{port}/v1"),
    };
    let started = std::time::Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed().as_secs() < 120,
            "llama.cpp's server did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
    Some(server)
}

/// What a run ended with, checked to be no protocol or server error: an answer, a reply Steward could not use
/// (a repeated call broken, a malformed step), or a limit — never an HTTP error or a timeout.
fn check_outcome(what: &str, out: &Value) {
    let outcome = out["outcome"].as_str().unwrap_or_default();
    let error = out["error"].as_str().unwrap_or_default();
    assert!(
        ["answered", "model_failed", "max_steps"].contains(&outcome),
        "{what}: {outcome}: {error}"
    );
    for protocol in ["HTTP", "time limit", "could not be reached", "cut off"] {
        assert!(!error.contains(protocol), "{what}: {outcome}: {error}");
    }
}

#[test]
fn a_real_model_runs_every_agent_mode_without_protocol_errors() {
    let Some(server) = llama_server() else {
        return;
    };
    let (dir, db) = demo_in("real-model");
    // Greedy decoding, so that a run repeats as it can.
    let config = format!("{dir}/steward.yaml");
    std::fs::write(
        &config,
        format!(
            "databases:\n  shop: sqlite://{db}\nmodels:\n  small: {{spec: 'openai-compatible:smollm2@{base}', \
             temperature: 0}}\n  small-react: {{spec: 'openai-compatible:smollm2@{base}', temperature: 0, \
             mode: react-json}}\ndefaults: {{model: small}}\n",
            base = server.base
        ),
    )
    .unwrap();
    let question = "When is my order QZKDLWPRTM arriving?";
    for model in ["small", "small-react"] {
        let out = steward(
            &[
                "ask", "--json", "-c", &config, "--agent", "orders", "--model", model, question,
            ],
            &[],
            "",
        );
        let stderr = text(&out.stderr);
        let json: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{model}: not JSON ({e}): {stderr}"));
        check_outcome(model, &json);
        assert!(!stderr.contains("HTTP 500"), "{model}: {stderr}");
    }

    // The same model behind `steward serve`, asked through `/v1`.
    let data = scratch_dir("real-model-serve-data");
    let serve = serve(
        &config,
        &format!("sqlite://{data}/store.sqlite"),
        &server.base,
        &data,
    );
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (status, body) = runtime.block_on(async {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::new();
        let response = client
            .post(format!("{}/v1/chat/completions", serve.base))
            .header("content-type", "application/json")
            .body(
                json!({"model": "orders", "temperature": 0, "messages": [{"role": "user", "content": question}]})
                    .to_string(),
            )
            .timeout(std::time::Duration::from_secs(600))
            .send()
            .await
            .unwrap();
        (response.status().as_u16(), response.text().await.unwrap())
    });
    assert_eq!(status, 200, "{body}");
    let reply: Value = serde_json::from_str(&body).unwrap();
    let content = reply["choices"][0]["message"]["content"]
        .as_str()
        .unwrap_or_default();
    assert!(!content.is_empty(), "{body}");
    assert!(!content.contains("HTTP 500"), "{content}");
}

//! Models from `steward.yaml`: the config's default model with its settings, an agent's own model for a
//! sub-agent, a config model named with `--model`, and `--model` driving every agent. Each model is a local
//! OpenAI-compatible mock, so where each request went is checked.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::Value;

fn config(helper_url: &str) -> String {
    let dir = scratch_dir("models");
    let path = format!("{dir}/steward.yaml");
    std::fs::write(
        &path,
        format!(
            r#"models:
  fast: {{spec: "openai:gpt-4o-mini", temperature: 0.1, max_tokens: 99}}
  helper_model: "openai-compatible:small@{helper_url}"
defaults:
  model: fast
agents:
  boss:
    instructions: Hand sums to the helper.
    agents: [helper]
  helper:
    description: Adds numbers.
    instructions: Add.
    model: helper_model
    tools: [calculator]
"#
        ),
    )
    .unwrap();
    path
}

fn max_tokens(body: &Value) -> Value {
    body.get("max_completion_tokens")
        .or_else(|| body.get("max_tokens"))
        .cloned()
        .unwrap_or(Value::Null)
}

#[tokio::test]
async fn each_agent_runs_on_its_configured_model_unless_model_is_given() {
    let boss = mock_openai(vec![
        tool_reply("b1", "helper", r#"{"request": "2 + 3"}"#),
        text_reply("It is 5."),
    ])
    .await;
    let helper = mock_openai(vec![text_reply("5")]).await;
    let file = config(&format!("{}/v1", helper.uri()));
    let boss_url = format!("{}/v1", boss.uri());
    let env = [
        ("OPENAI_BASE_URL", boss_url.as_str()),
        ("OPENAI_API_KEY", "k"),
    ];
    let out = steward(
        &[
            "ask",
            "--config",
            &file,
            "-a",
            "boss",
            "--no-store",
            "What is 2 + 3?",
        ],
        &env,
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "It is 5.\n");
    let (boss_bodies, helper_bodies) = (bodies(&boss).await, bodies(&helper).await);
    assert_eq!(boss_bodies.len(), 2);
    assert_eq!(helper_bodies.len(), 1, "the helper ran on its own model");
    assert_eq!(helper_bodies[0]["model"], "small");
    assert_eq!(boss_bodies[0]["model"], "gpt-4o-mini");
    // The default model's settings reach its requests.
    assert!((boss_bodies[0]["temperature"].as_f64().unwrap() - 0.1).abs() < 1e-6);
    assert_eq!(max_tokens(&boss_bodies[0]), 99);

    // `--model` names one model for every agent: here the config's `fast`, by name.
    let boss = mock_openai(vec![
        tool_reply("b1", "helper", r#"{"request": "2 + 3"}"#),
        text_reply("5"),
        text_reply("It is 5."),
    ])
    .await;
    let helper = mock_openai(vec![text_reply("5")]).await;
    let file = config(&format!("{}/v1", helper.uri()));
    let boss_url = format!("{}/v1", boss.uri());
    let env = [
        ("OPENAI_BASE_URL", boss_url.as_str()),
        ("OPENAI_API_KEY", "k"),
    ];
    let out = steward(
        &[
            "ask",
            "--config",
            &file,
            "-a",
            "boss",
            "--model",
            "fast",
            "--no-store",
            "What is 2 + 3?",
        ],
        &env,
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(bodies(&boss).await.len(), 3);
    assert!(bodies(&helper).await.is_empty());

    // A bare model name picks the provider from the environment.
    let boss = mock_openai(vec![text_reply("Hi.")]).await;
    let boss_url = format!("{}/v1", boss.uri());
    let out = steward(
        &["ask", "--model", "gpt-4.1-nano", "--no-store", "hi"],
        &[("OPENAI_BASE_URL", &boss_url), ("OPENAI_API_KEY", "k")],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(bodies(&boss).await[0]["model"], "gpt-4.1-nano");
}

/// A model entry of the wrong shape says what an entry may be, or which key is wrong, at its place in the file
/// (not "data did not match any variant of untagged enum ModelEntry").
#[test]
fn a_model_entry_of_the_wrong_shape_names_the_key_and_what_an_entry_may_be() {
    let dir = scratch_dir("model-shape");
    let path = format!("{dir}/steward.yaml");
    let cases = [
        (
            "models:\n  fast:\n    spec: openai:gpt-4o-mini\n    temprature: 0.2\n",
            ":4:5: models.fast: unknown field `temprature`, expected one of `spec`, `mode`, `temperature`, \
             `max_tokens`, `timeout`",
        ),
        (
            "models:\n  fast:\n    spec: openai:gpt-4o-mini\n    temperature: hot\n",
            ":4:18: models.fast.temperature: invalid type: string \"hot\"",
        ),
        (
            "models:\n  fast: [openai, gpt-4o-mini]\n",
            ":2:9: models.fast: invalid type: sequence, expected a model: a spec string (`openai:gpt-4o-mini`) \
             or a mapping with `spec` and optionally `mode`, `temperature`, `max_tokens`, `timeout`",
        ),
        (
            "models:\n  fast:\n    temperature: 0.1\n",
            ":3:5: models.fast: missing field `spec`",
        ),
    ];
    for (yaml, expected) in cases {
        std::fs::write(&path, yaml).unwrap();
        let out = steward(&["config", "check", "--config", &path], &[], "");
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{yaml}: {stderr}");
        assert!(
            stderr.contains(&format!("{path}{expected}")),
            "{yaml}: {stderr}"
        );
        assert!(!stderr.contains("untagged"), "{stderr}");
    }
    // Both shapes still load, in block and flow style.
    std::fs::write(
        &path,
        "models:\n  a: openai:gpt-4o-mini\n  b: {spec: \"ollama:qwen2.5:7b\", mode: react-json}\n  \
         c:\n    spec: anthropic:claude-sonnet-4-5\n    max_tokens: 100\n    timeout: 30\n",
    )
    .unwrap();
    let out = steward(&["config", "check", "--config", &path], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

/// A bare model name says which provider it got when the environment chose it, and why; one that would go to
/// an Ollama server that is not there, or lacks it, fails at once (no retries) saying what would work.
#[tokio::test]
async fn a_bare_name_says_its_provider_and_fails_fast_without_one() {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    // Nothing configured (the harness points OLLAMA_HOST at a closed port): an error, at once.
    let started = std::time::Instant::now();
    let out = steward(&["ask", "-m", "gpt4o", "--no-store", "hi"], &[], "");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "error: `gpt4o` names no provider, so it went to Ollama, and no Ollama server answered at \
             http://127.0.0.1:9. (A name without a provider goes to Anthropic if it starts with claude"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("Did you mean `gpt-4o`? Or give the provider: openai:<model>"),
        "{stderr}"
    );
    assert!(!stderr.contains("retrying"), "{stderr}");
    assert!(started.elapsed() < std::time::Duration::from_secs(2));

    // An Ollama that answers: a model it has is used, saying so; one it lacks is an error naming what it has.
    let ollama = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/api/tags"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            serde_json::json!({"models": [{"name": "qwen2.5:7b"}, {"name": "llama3:latest"}]}),
        ))
        .mount(&ollama)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(text_reply("Hello."))
        .mount(&ollama)
        .await;
    let host = ollama.uri();
    for name in ["qwen2.5:7b", "llama3"] {
        let out = steward(
            &["ask", "-m", name, "--no-store", "hi"],
            &[("OLLAMA_HOST", &host)],
            "",
        );
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        assert_eq!(text(&out.stdout), "Hello.\n");
        assert!(
            stderr.contains(&format!(
                "note: `{name}` names no provider: using ollama:{name}, the model of that name on the Ollama \
                 server at {host}"
            )),
            "{stderr}"
        );
    }
    let out = steward(
        &["ask", "-m", "qwen2.5:7", "--no-store", "hi"],
        &[("OLLAMA_HOST", &host)],
        "",
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "`qwen2.5:7` names no provider, so it went to Ollama, and the Ollama server at {host} does not \
             have it (it has qwen2.5:7b, llama3:latest)"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("Did you mean `qwen2.5:7b`? Or pull it (`ollama pull qwen2.5:7`)"),
        "{stderr}"
    );

    // OPENAI_BASE_URL decides: said, with the server.
    let server = mock_openai(vec![text_reply("Hi.")]).await;
    let base = format!("{}/v1", server.uri());
    let out = steward(
        &["ask", "-m", "llama3.1", "--no-store", "hi"],
        &[("OPENAI_BASE_URL", &base)],
        "",
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "note: `llama3.1` names no provider: using openai:llama3.1, on the OpenAI-compatible server of \
             OPENAI_BASE_URL ({base})"
        )),
        "{stderr}"
    );
    // The name alone decides (an OpenAI model name), or the spec names its provider: nothing to say.
    for model in ["gpt-4.1-nano", "openai:llama3.1"] {
        let out = steward(
            &["ask", "-m", model, "--no-store", "hi"],
            &[("OPENAI_BASE_URL", &base), ("OPENAI_API_KEY", "k")],
            "",
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert!(
            !text(&out.stderr).contains("names no provider"),
            "{}",
            text(&out.stderr)
        );
    }

    // A config model with a bare spec fails as fast, at its place in the file.
    let dir = scratch_dir("bare-config");
    let file = format!("{dir}/steward.yaml");
    std::fs::write(&file, "models:\n  fast: gpt4o\ndefaults:\n  model: fast\n").unwrap();
    let out = steward(&["ask", "--config", &file, "--no-store", "hi"], &[], "");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "the model `fast` ({file}:2:3): `gpt4o` names no provider, so it went to Ollama"
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("retrying"), "{stderr}");
}

//! Azure OpenAI over real HTTP: the deployments URL form with `api-version` and the `api-key` header, and the
//! v1 form with an Entra ID bearer token.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::json;
use steward_core::Model;
use steward_llm::{Auth, OpenAiConfig, OpenAiModel, Secret};
use wiremock::matchers::{bearer_token, header, method, path, query_param};
use wiremock::{Mock, MockServer};

#[tokio::test]
async fn deployments_form_with_api_key() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/openai/deployments/gpt4o-mini-prod/chat/completions"))
        .and(query_param("api-version", "2024-10-21"))
        .and(header("api-key", "az-key-1"))
        .respond_with(json_reply("azure_tool_calls.json"))
        .expect(1)
        .mount(&server)
        .await;
    let config = OpenAiConfig::azure(
        "gpt4o-mini-prod",
        server.uri(),
        Auth::ApiKey(Secret::new("az-key-1")),
        Some("2024-10-21".into()),
    );
    let m = OpenAiModel::new(config).unwrap();
    assert_eq!(m.name(), "azure:gpt4o-mini-prod");
    let reply = m.complete(&request()).await.unwrap();
    assert_eq!(reply.tool_calls[0].name, "calculator");
    assert_eq!(args(&reply.tool_calls[0]), json!({"expression": "47^0.23"}));
    assert!(
        reply.extra.contains_key("prompt_filter_results"),
        "Azure's extra fields are kept"
    );
    let requests = server.received_requests().await.unwrap();
    assert!(requests[0].headers.get("authorization").is_none());
}

#[tokio::test]
async fn v1_form_with_entra_id_token() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/openai/v1/chat/completions"))
        .and(bearer_token("eyJ0eXAiOiJKV1Q.entra.token"))
        .respond_with(json_reply("azure_tool_calls.json"))
        .expect(1)
        .mount(&server)
        .await;
    let config = OpenAiConfig::azure(
        "gpt4o-mini-prod",
        format!("{}/", server.uri()),
        Auth::Bearer(Secret::new("eyJ0eXAiOiJKV1Q.entra.token")),
        None,
    );
    let reply = OpenAiModel::new(config)
        .unwrap()
        .complete(&request())
        .await
        .unwrap();
    assert_eq!(reply.tool_calls.len(), 1);
    let body = body_of(&server, 0).await;
    assert_eq!(
        body["model"], "gpt4o-mini-prod",
        "the v1 form names the deployment as the model"
    );
    assert_eq!(body.get("max_tokens"), None);
}

#[tokio::test]
async fn endpoint_given_with_the_v1_path_is_not_doubled() {
    let config = OpenAiConfig::azure(
        "d",
        "https://r.openai.azure.com/openai/v1/",
        Auth::None,
        Some("2024-10-21".into()),
    );
    assert_eq!(
        config.url(),
        "https://r.openai.azure.com/openai/v1/chat/completions"
    );
    let config = OpenAiConfig::azure(
        "d",
        "https://r.openai.azure.com",
        Auth::None,
        Some("2025-01-01-preview".into()),
    );
    assert_eq!(
        config.url(),
        "https://r.openai.azure.com/openai/deployments/d/chat/completions?api-version=2025-01-01-preview"
    );
}

#[test]
fn a_query_string_in_the_endpoint_stays_at_the_end_of_the_url() {
    let config = OpenAiConfig::azure(
        "d",
        "https://gw.example/?subscription-key=k1",
        Auth::None,
        Some("2024-10-21".into()),
    );
    assert_eq!(
        config.url(),
        "https://gw.example/openai/deployments/d/chat/completions?api-version=2024-10-21&subscription-key=k1"
    );
    let config = OpenAiConfig::azure("d", "https://gw.example/openai/v1?key=k2", Auth::None, None);
    assert_eq!(
        config.url(),
        "https://gw.example/openai/v1/chat/completions?key=k2"
    );
}

#[tokio::test]
async fn configured_from_the_environment_in_both_forms() {
    use steward_llm::{Env, ModelSetup, connect};
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/openai/deployments/prod/chat/completions"))
        .and(query_param("api-version", "2024-10-21"))
        .and(header("api-key", "k1"))
        .respond_with(json_reply("azure_tool_calls.json"))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/openai/v1/chat/completions"))
        .and(bearer_token("entra"))
        .respond_with(json_reply("azure_tool_calls.json"))
        .expect(1)
        .mount(&server)
        .await;
    let uri = server.uri();
    let env = Env::from_pairs([
        ("AZURE_OPENAI_ENDPOINT", uri.as_str()),
        ("AZURE_OPENAI_API_KEY", "k1"),
        ("AZURE_OPENAI_DEPLOYMENT", "prod"),
    ]);
    let model = connect(ModelSetup::default(), &env).await.unwrap();
    assert_eq!(model.name(), "azure:prod");
    model.complete(&request()).await.unwrap();
    let env = Env::from_pairs([
        ("AZURE_OPENAI_ENDPOINT", uri.as_str()),
        ("AZURE_OPENAI_AD_TOKEN", "entra"),
        ("AZURE_OPENAI_API_VERSION", "v1"),
    ]);
    let setup = ModelSetup {
        spec: Some("azure:prod".into()),
        ..ModelSetup::default()
    };
    connect(setup, &env)
        .await
        .unwrap()
        .complete(&request())
        .await
        .unwrap();
}

#[tokio::test]
async fn streaming_with_content_filter_chunks() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/openai/deployments/prod/chat/completions"))
        .respond_with(sse_reply("azure_stream_text.sse"))
        .mount(&server)
        .await;
    let config = OpenAiConfig::azure(
        "prod",
        server.uri(),
        Auth::ApiKey(Secret::new("k")),
        Some("2024-10-21".into()),
    );
    let deltas = Deltas::default();
    let reply = OpenAiModel::new(config)
        .unwrap()
        .stream(&request(), &deltas.sink())
        .await
        .unwrap();
    assert_eq!(reply.content.as_deref(), Some("47^0.23 is about 2.42."));
    assert_eq!(deltas.text(), "47^0.23 is about 2.42.");
    assert_eq!(reply.usage.total(), 69);
    assert!(reply.extra.contains_key("prompt_filter_results"));
}

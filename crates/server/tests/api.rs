//! The HTTP API of an in-process server over real HTTP: credentials (API tokens and OIDC tokens signed by the
//! test keys), roles, limits, the OpenAI-compatible facade and the OpenAPI document. The model is a local
//! stand-in that answers with the question it got (the provider's wire format is tested with the binary in
//! crates/cli/tests/serve.rs).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use jsonwebtoken::Algorithm;
use serde_json::{Value, json};
use steward_server::wire::ServerEvent;

#[tokio::test]
async fn missing_or_bad_credentials_are_401_and_a_role_without_permission_is_403() {
    let s = start("").await;
    let (status, body) = s.json("GET", "/api/me", None, None).await;
    assert_eq!(status, 401, "{body}");
    assert!(body["error"].as_str().unwrap().contains("Bearer"), "{body}");
    assert_eq!(s.json("GET", "/api/me", Some("nope"), None).await.0, 401);
    let (status, me) = s.json("GET", "/api/me", Some(ADA), None).await;
    assert_eq!(status, 200, "{me}");
    assert_eq!(me["principal"], "ada");
    assert_eq!(me["role"], "clerk");
    assert_eq!(me["admin"], false);
    let agents: Vec<&str> = me["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(agents, ["assistant"]);

    // An unknown agent: the answer names only the agents the clerk may use.
    let (status, body) = s
        .json(
            "POST",
            "/api/conversations",
            Some(ADA),
            Some(json!({"agent": "nobody"})),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    let error = body["error"].as_str().unwrap();
    assert!(
        error.ends_with("the agents you may use are: assistant"),
        "{body}"
    );
    assert!(!error.contains("helper"), "{body}");

    // The clerk may not run the analyst: 403, on the API and on the OpenAI facade.
    let (status, body) = s
        .json(
            "POST",
            "/api/conversations",
            Some(ADA),
            Some(json!({"agent": "helper"})),
        )
        .await;
    assert_eq!(status, 403, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("may not use the agent"),
        "{body}"
    );
    let (status, body) = s
        .json(
            "POST",
            "/v1/chat/completions",
            Some(ADA),
            Some(json!({"model": "helper", "messages": [{"role": "user", "content": "hi"}]})),
        )
        .await;
    // /v1 answers an agent the role may not use as OpenAI answers a model one may not use: 404.
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["error"]["code"], "model_not_found");

    // Runs and the audit trail are for administrators.
    assert_eq!(s.json("GET", "/api/runs", Some(ADA), None).await.0, 403);
    assert_eq!(s.json("GET", "/api/audit", Some(ADA), None).await.0, 403);
    assert_eq!(s.json("GET", "/api/runs", Some(ROOT), None).await.0, 200);
    let (status, audit) = s.json("GET", "/api/audit", Some(ROOT), None).await;
    assert_eq!(status, 200);
    assert_eq!(audit["intact"], true);

    // Health needs no credentials.
    assert_eq!(s.json("GET", "/health", None, None).await.0, 200);
    assert_eq!(s.json("GET", "/ready", None, None).await.0, 200);
}

#[tokio::test]
async fn oidc_tokens_signed_by_the_test_keys_map_claims_to_the_principal() {
    let s = start("").await;
    let token = jwt(
        "rsa-test",
        "rsa.pem",
        Algorithm::RS256,
        claims("carol", "clerk"),
    );
    let (status, me) = s.json("GET", "/api/me", Some(&token), None).await;
    assert_eq!(status, 200, "{me}");
    assert_eq!(me["principal"], "carol");
    assert_eq!(me["role"], "clerk");
    let token = jwt(
        "ec-test",
        "ec.pem",
        Algorithm::ES256,
        claims("dan", "viewer"),
    );
    let (status, me) = s.json("GET", "/api/me", Some(&token), None).await;
    assert_eq!(status, 200, "{me}");
    assert_eq!(me["role"], "viewer");

    // Signed by a key the JWKS does not hold, under a kid it does: 401.
    let forged = jwt(
        "rsa-test",
        "rotated.pem",
        Algorithm::RS256,
        claims("carol", "clerk"),
    );
    assert_eq!(s.json("GET", "/api/me", Some(&forged), None).await.0, 401);
    // Expired: 401.
    let mut old = claims("carol", "clerk");
    old["exp"] = json!(1_000_000);
    let expired = jwt("rsa-test", "rsa.pem", Algorithm::RS256, old);
    assert_eq!(s.json("GET", "/api/me", Some(&expired), None).await.0, 401);
    // Valid, but its role is not one of the config's: 403.
    let stranger = jwt(
        "rsa-test",
        "rsa.pem",
        Algorithm::RS256,
        claims("eve", "superuser"),
    );
    assert_eq!(s.json("GET", "/api/me", Some(&stranger), None).await.0, 403);
}

#[tokio::test]
async fn a_conversation_streams_its_answer_and_keeps_its_history() {
    let s = start("").await;
    let (status, created) = s
        .json("POST", "/api/conversations", Some(ADA), Some(json!({})))
        .await;
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().unwrap();
    let (status, text) = s
        .call(
            "POST",
            &format!("/api/conversations/{id}/messages"),
            Some(ADA),
            Some(json!({"content": "first"})),
        )
        .await;
    assert_eq!(status, 200, "{text}");
    let first = events(&text);
    assert_eq!(first[0]["type"], "run");
    assert_eq!(first[0]["conversation_id"], id);
    let last = first.last().unwrap();
    assert_eq!(last["type"], "answer", "{text}");
    assert!(last["content"].as_str().unwrap().starts_with("echo: first"));
    assert!(first.iter().any(|e| e["type"] == "usage"));
    // Every event is one of the contract's, named on its `event:` line as in its `type`.
    let names: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("event: "))
        .collect();
    assert_eq!(names.len(), first.len(), "{text}");
    for (name, event) in names.iter().zip(&first) {
        let typed: ServerEvent = serde_json::from_value(event.clone())
            .unwrap_or_else(|e| panic!("{event} is not a ServerEvent: {e}"));
        assert_eq!(typed.kind(), *name);
        assert_eq!(serde_json::to_value(&typed).unwrap(), *event);
    }

    let (_, text) = s
        .call(
            "POST",
            &format!("/api/conversations/{id}/messages"),
            Some(ADA),
            Some(json!({"content": "second", "settings": {"history": 10, "temperature": 0.5}})),
        )
        .await;
    let answer = events(&text).last().cloned().unwrap();
    // System, the first question and answer, the second question.
    assert_eq!(answer["content"], "echo: second (4 messages)", "{text}");

    let (status, conversation) = s
        .json("GET", &format!("/api/conversations/{id}"), Some(ADA), None)
        .await;
    assert_eq!(status, 200);
    let roles: Vec<&str> = conversation["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant"]);
    // The answers keep their events (but the streamed text pieces), as the contract has them.
    let kept: Vec<ServerEvent> =
        serde_json::from_value(conversation["messages"][1]["events"].clone()).unwrap();
    assert!(
        matches!(kept.first(), Some(ServerEvent::Run { .. })),
        "{kept:?}"
    );
    assert!(
        matches!(kept.last(), Some(ServerEvent::Answer { .. })),
        "{kept:?}"
    );
    assert!(!kept.iter().any(|e| matches!(e, ServerEvent::Delta { .. })));
    assert_eq!(conversation["messages"][0]["events"], Value::Null);
    assert_eq!(conversation["settings"]["temperature"], 0.5);
    assert_eq!(conversation["title"], "first");

    // An administrator may read it, not post to it (the run would read with the administrator's rights).
    assert_eq!(
        s.json("GET", &format!("/api/conversations/{id}"), Some(ROOT), None)
            .await
            .0,
        200
    );
    let (status, body) = s
        .json(
            "POST",
            &format!("/api/conversations/{id}/messages"),
            Some(ROOT),
            Some(json!({"content": "x"})),
        )
        .await;
    assert_eq!(status, 403, "{body}");
    // Someone else's conversation does not exist for them.
    assert_eq!(
        s.json("GET", &format!("/api/conversations/{id}"), Some(VIC), None)
            .await
            .0,
        404
    );
    let (_, mine) = s.json("GET", "/api/conversations", Some(VIC), None).await;
    assert_eq!(mine, json!([]));
    // Bad settings are refused with what is allowed.
    let (status, body) = s
        .json(
            "POST",
            &format!("/api/conversations/{id}/messages"),
            Some(ADA),
            Some(json!({"content": "x", "settings": {"temperature": 9}})),
        )
        .await;
    assert_eq!(status, 400);
    assert!(
        body["error"].as_str().unwrap().contains("from 0 to 2"),
        "{body}"
    );
    assert_eq!(
        s.json(
            "DELETE",
            &format!("/api/conversations/{id}"),
            Some(ADA),
            None
        )
        .await
        .0,
        204
    );
    assert_eq!(
        s.json("GET", &format!("/api/conversations/{id}"), Some(ADA), None)
            .await
            .0,
        404
    );
}

#[tokio::test]
async fn too_many_requests_are_429_and_too_large_bodies_413() {
    let s = start("  limits: {requests_per_minute: 3, body_bytes: 2048}").await;
    for _ in 0..3 {
        assert_eq!(s.json("GET", "/api/me", Some(ADA), None).await.0, 200);
    }
    let response = s
        .client
        .get(format!("{}/api/me", s.base))
        .bearer_auth(ADA)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 429);
    let wait: u64 = response.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&wait));
    // Another principal has its own allowance.
    assert_eq!(s.json("GET", "/api/me", Some(VIC), None).await.0, 200);

    let big = "x".repeat(4096);
    let (status, _) = s
        .call(
            "POST",
            "/api/conversations",
            Some(VIC),
            Some(json!({"title": big})),
        )
        .await;
    assert_eq!(status, 413);
}

#[tokio::test]
async fn the_openai_facade_lists_agents_as_models_and_answers_streaming_or_not() {
    let s = start("").await;
    let (status, models) = s.json("GET", "/v1/models", Some(VIC), None).await;
    assert_eq!(status, 200);
    assert_eq!(models["data"][0]["id"], "helper");
    assert_eq!(models["data"].as_array().unwrap().len(), 1);

    let request = json!({"model": "assistant", "messages": [
        {"role": "user", "content": "one"}, {"role": "assistant", "content": "two"},
        {"role": "user", "content": [{"type": "text", "text": "three"}]}]});
    let (status, reply) = s
        .json(
            "POST",
            "/v1/chat/completions",
            Some(ADA),
            Some(request.clone()),
        )
        .await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["object"], "chat.completion");
    assert_eq!(
        reply["choices"][0]["message"]["content"],
        "echo: three (4 messages)"
    );
    assert_eq!(reply["choices"][0]["finish_reason"], "stop");

    let mut streaming = request;
    streaming["stream"] = json!(true);
    let (status, text) = s
        .call("POST", "/v1/chat/completions", Some(ADA), Some(streaming))
        .await;
    assert_eq!(status, 200);
    assert!(text.trim_end().ends_with("data: [DONE]"), "{text}");
    let chunks = events(&text);
    assert!(
        chunks
            .iter()
            .all(|c| c["object"] == "chat.completion.chunk")
    );
    let content: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(content, "echo: three (4 messages)");
    assert_eq!(
        chunks.last().unwrap()["choices"][0]["finish_reason"],
        "stop"
    );

    // A model that fails before it writes anything: 502 with OpenAI's error object, streamed or not, and
    // nothing of the provider's endpoint.
    for stream in [false, true] {
        let (status, failed) = s
            .call(
                "POST",
                "/v1/chat/completions",
                Some(ADA),
                Some(json!({"model": "assistant", "stream": stream,
                            "messages": [{"role": "user", "content": "fail, model"}]})),
            )
            .await;
        assert_eq!(status, 502, "stream {stream}: {failed}");
        let failed: Value = serde_json::from_str(&failed).unwrap();
        assert!(
            failed["error"]["message"]
                .as_str()
                .unwrap()
                .contains("did not answer"),
            "{failed}"
        );
        assert!(!failed.to_string().contains("10.9.8.7"), "{failed}");
    }

    let (status, body) = s
        .json(
            "POST",
            "/v1/chat/completions",
            Some(ADA),
            Some(json!({"model": "nobody", "messages": [{"role": "user", "content": "x"}]})),
        )
        .await;
    assert_eq!(status, 404);
    assert_eq!(body["error"]["code"], "model_not_found", "{body}");
    // An agent that exists but the caller's role may not use is answered the same way: its name is not confirmed.
    let (status, hidden) = s
        .json(
            "POST",
            "/v1/chat/completions",
            Some(ADA),
            Some(json!({"model": "helper", "messages": [{"role": "user", "content": "x"}]})),
        )
        .await;
    assert_eq!(status, 404, "{hidden}");
    assert_eq!(hidden["error"]["code"], "model_not_found", "{hidden}");
    assert!(
        !hidden["error"]["message"]
            .as_str()
            .unwrap()
            .contains("may not use"),
        "{hidden}"
    );
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("`nobody` does not exist")
            && message.contains("Models you may use: assistant"),
        "{body}"
    );
}

#[tokio::test]
async fn the_openapi_document_lists_the_routes() {
    let s = start("").await;
    let (status, doc) = s.json("GET", "/openapi.json", None, None).await;
    assert_eq!(status, 200);
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
    for route in [
        "/api/conversations",
        "/api/conversations/{id}/messages",
        "/api/approvals",
        "/api/approvals/{id}",
        "/v1/chat/completions",
        "/v1/models",
        "/health",
        "/ready",
    ] {
        assert!(
            doc["paths"].get(route).is_some(),
            "{route} missing from /openapi.json"
        );
    }
    // Every event of the stream is described, with its fields.
    let schemas = &doc["components"]["schemas"];
    let kinds: Vec<(String, &Value)> = schemas["ServerEvent"]["oneOf"]
        .as_array()
        .expect("ServerEvent is one of several schemas")
        .iter()
        .map(|variant| {
            let kind = variant["properties"]["type"]["enum"][0]
                .as_str()
                .unwrap_or_else(|| panic!("{variant}"))
                .to_owned();
            (kind, variant)
        })
        .collect();
    let names: Vec<&str> = kinds.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        names,
        [
            "run",
            "step",
            "delta",
            "thought",
            "tool_call",
            "observation",
            "rejected",
            "decided",
            "usage",
            "changes",
            "approval",
            "answer",
            "error"
        ]
    );
    for (kind, variant) in &kinds {
        let required: Vec<&str> = variant["required"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert!(required.contains(&"type"), "{kind}: {variant}");
        assert!(
            variant["properties"].get("run_id").is_some()
                && variant["properties"].get("parent_run_id").is_some(),
            "{kind}: {variant}"
        );
    }
    for schema in ["ApprovalView", "Table", "Chart", "RunOutcome", "ErrorBody"] {
        assert!(schemas.get(schema).is_some(), "{schema} missing");
    }
    let stream = &doc["paths"]["/api/conversations/{id}/messages"]["post"]["responses"]["200"];
    assert_eq!(
        stream["content"]["text/event-stream"]["schema"]["$ref"],
        "#/components/schemas/ServerEvent",
        "{stream}"
    );
}

#[tokio::test]
async fn cors_is_off_unless_the_config_lists_origins() {
    let preflight = |s: &Running| {
        s.client
            .request(
                reqwest::Method::OPTIONS,
                format!("{}/api/conversations", s.base),
            )
            .header("origin", "https://app.example.test")
            .header("access-control-request-method", "POST")
            .header(
                "access-control-request-headers",
                "authorization,content-type",
            )
            .send()
    };
    let closed = start("").await;
    let response = preflight(&closed).await.unwrap();
    assert!(
        response
            .headers()
            .get("access-control-allow-origin")
            .is_none()
    );
    let open = start("  cors: [https://app.example.test]").await;
    let response = preflight(&open).await.unwrap();
    assert_eq!(
        response.headers()["access-control-allow-origin"],
        "https://app.example.test"
    );
    // Another origin is not let in.
    let other = open
        .client
        .get(format!("{}/api/me", open.base))
        .header("origin", "https://evil.example.test")
        .bearer_auth(ADA)
        .send()
        .await
        .unwrap();
    assert!(other.headers().get("access-control-allow-origin").is_none());
}

/// What refuses an MCP request before the MCP server sees it (credentials, the body's type) answers as JSON-RPC
/// does, with the HTTP status kept: an MCP client reads `error.code` and `error.message`.
#[tokio::test]
async fn mcp_requests_refused_at_the_door_get_json_rpc_errors() {
    let s = start("").await;
    let rpc = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let refused = [
        // No credentials.
        s.request("POST", "/mcp")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(rpc),
        // Not declared as JSON.
        s.request("POST", "/mcp")
            .bearer_auth(ADA)
            .header("content-type", "text/plain")
            .header("accept", "application/json, text/event-stream")
            .body(rpc),
    ];
    for (request, status) in refused.into_iter().zip([401, 415]) {
        let (got, _, body) = s.send(request).await;
        assert_eq!(got, status, "{body}");
        let answer: Value = serde_json::from_str(&body).unwrap_or_else(|_| panic!("{body}"));
        assert_eq!(answer["jsonrpc"], "2.0", "{answer}");
        assert_eq!(answer["id"], Value::Null, "{answer}");
        assert_eq!(answer["error"]["code"], -32600, "{answer}");
        assert!(
            !answer["error"]["message"].as_str().unwrap().is_empty(),
            "{answer}"
        );
    }
    // The API's own errors keep their shape.
    let (status, body) = s.json("GET", "/api/me", None, None).await;
    assert_eq!(status, 401);
    assert!(body["error"].is_string(), "{body}");
}

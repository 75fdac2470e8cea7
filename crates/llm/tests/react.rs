//! ReAct modes over real HTTP: tools described in the prompt, replies parsed leniently into tool calls,
//! repair requests for hopeless replies, and a clear failure after the limit.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use common::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use steward_core::{
    Agent, Model, ModelError, Outcome, RunStatus, Runner, ToolOutput, Toolbox, TypedTool,
};
use steward_llm::{OpenAiConfig, OpenAiModel, ReactModel, ReactStyle};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

fn reply(content: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "chatcmpl-r", "object": "chat.completion", "model": "llama3.2:3b",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
    }))
}

fn local(server: &MockServer) -> OpenAiModel {
    OpenAiModel::new(OpenAiConfig::ollama(
        "llama3.2:3b",
        Some(format!("{}/v1", server.uri())),
    ))
    .unwrap()
}

/// Arguments of `calculator`.
#[derive(Deserialize, JsonSchema)]
struct Calc {
    /// The expression.
    expression: String,
}

fn agent() -> Agent {
    let calc = TypedTool::new(
        "calculator",
        "Evaluates arithmetic.",
        |_ctx, a: Calc| async move { Ok(ToolOutput::text(format!("{} = 6", a.expression))) },
    )
    .read_only();
    Agent::new("react", "You compute.", Toolbox::new().with(calc).unwrap())
}

fn messages(body: &Value) -> Vec<(String, String)> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_owned(),
                m["content"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn json_mode_runs_a_tool_from_a_prose_wrapped_reply_and_answers() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(Sequence::new([
            reply("My apologies for the confusion. Here is the corrected response:\n{\"thought\": \"I should compute it\", \"action\": {\"name\": \"calculator\", \"arguments\": {\"expression\": \"5 * 1.2\"}}}"),
            reply("```json\n{\"thought\": \"done\", \"final_answer\": \"5 * 1.2 is 6.\"}\n```"),
        ]))
        .mount(&server)
        .await;
    let model = ReactModel::new(local(&server), ReactStyle::Json);
    assert_eq!(model.name(), "ollama:llama3.2:3b (react-json)");
    let runner = Runner::new(Arc::new(agent()), Arc::new(model));
    let (run, status) = runner.run("What is 5 * 1.2?").await;
    assert_eq!(
        status,
        RunStatus::Done(Outcome::Answered {
            answer: "5 * 1.2 is 6.".into()
        })
    );
    // The thought became the assistant text beside the call, so traces show it.
    assert_eq!(run.messages()[2].text(), Some("I should compute it"));
    assert_eq!(run.usage().total(), 240);

    let first = body_of(&server, 0).await;
    assert!(
        first.get("tools").is_none(),
        "no native tools in ReAct mode"
    );
    assert_eq!(first["response_format"]["type"], "json_schema");
    assert_eq!(
        first["response_format"]["json_schema"]["schema"]["properties"]["action"]["properties"]["name"]
            ["enum"],
        json!(["calculator"])
    );
    let system = &messages(&first)[0];
    assert_eq!(system.0, "system");
    assert!(
        system.1.starts_with(
            "You compute.\n\nYou have these tools:\n\n- calculator: Evaluates arithmetic."
        ),
        "{}",
        system.1
    );
    assert!(
        system.1.contains("\"expression\""),
        "the schema is in the prompt"
    );

    let second = messages(&body_of(&server, 1).await);
    assert_eq!(second[2].0, "assistant");
    let turn: Value = serde_json::from_str(&second[2].1).unwrap();
    assert_eq!(
        turn,
        json!({"thought": "I should compute it", "action": {"name": "calculator", "arguments": {"expression": "5 * 1.2"}}})
    );
    assert_eq!(
        second[3],
        (
            "user".to_owned(),
            "Observation from calculator: 5 * 1.2 = 6".to_owned()
        )
    );
}

#[tokio::test]
async fn a_hopeless_reply_is_repaired_then_fails_clearly() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(reply("Sure! The answer is probably 6, but I am not sure."))
        .mount(&server)
        .await;
    let model = ReactModel::new(local(&server), ReactStyle::Json).with_max_repairs(2);
    let mut req = request();
    req.messages.truncate(2);
    let err = model.complete(&req).await.unwrap_err();
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        3,
        "the first try and two repairs"
    );
    match &err {
        ModelError::InvalidResponse { provider, message } => {
            assert_eq!(provider, "ollama:llama3.2:3b");
            assert!(message.starts_with("after 2 repair request(s) the reply was still unusable (the reply contains no JSON object)"), "{message}");
            assert!(
                message.contains("Sure! The answer is probably 6"),
                "{message}"
            );
        }
        other => panic!("{other:?}"),
    }
    // The repair request carries the parse error, the faulty output and the schema.
    let repair = messages(&body_of(&server, 1).await);
    let (role, text) = repair.last().unwrap();
    assert_eq!(role, "user");
    assert!(text.contains("the reply contains no JSON object"), "{text}");
    assert!(
        text.contains("Your reply was: Sure! The answer is probably 6"),
        "{text}"
    );
    assert!(text.contains("matching this JSON Schema: {"), "{text}");
    assert_eq!(repair[repair.len() - 2].0, "assistant");
}

#[tokio::test]
async fn a_repair_that_works_counts_both_calls() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(Sequence::new([
            reply("{\"thought\": \"oops\""),
            reply("{\"thought\": \"ok\", \"final_answer\": \"6\"}"),
        ]))
        .mount(&server)
        .await;
    let mut req = request();
    req.messages.truncate(2);
    let reply = ReactModel::new(local(&server), ReactStyle::Json)
        .complete(&req)
        .await
        .unwrap();
    assert_eq!(reply.content.as_deref(), Some("6"));
    assert_eq!(reply.usage.total(), 240);
    assert_eq!(reply.extra["react_attempts"], 2);
}

#[tokio::test]
async fn text_mode_uses_the_observation_stop_sequence() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(Sequence::new([
            reply("Thought: I need to calculate.\nAction: calculator\nAction Input: {\"expression\": \"5 * 1.2\"}\n"),
            reply("Thought: I know the final answer\nFinal Answer: 6"),
        ]))
        .mount(&server)
        .await;
    let runner = Runner::new(
        Arc::new(agent()),
        Arc::new(ReactModel::new(local(&server), ReactStyle::Text)),
    );
    let (_, status) = runner.run("What is 5 * 1.2?").await;
    assert_eq!(
        status,
        RunStatus::Done(Outcome::Answered { answer: "6".into() })
    );
    let first = body_of(&server, 0).await;
    assert_eq!(first["stop"], json!(["Observation:"]));
    assert!(first.get("response_format").is_none());
    assert!(
        messages(&first)[0]
            .1
            .contains("Action: the tool to use, one of [calculator]")
    );
    let second = messages(&body_of(&server, 1).await);
    assert_eq!(
        second[2].1,
        "Thought: I need to calculate.\nAction: calculator\nAction Input: {\"expression\":\"5 * 1.2\"}"
    );
}

#[tokio::test]
async fn the_tools_prompt_follows_the_toolbox_of_each_request() {
    use steward_core::{Message, ModelRequest, ToolSpec};
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(reply(r#"{"thought": "done", "final_answer": "ok"}"#))
        .mount(&server)
        .await;
    let model = ReactModel::new(local(&server), ReactStyle::Text);
    let toolbox = |name: &str| -> Arc<[ToolSpec]> {
        vec![ToolSpec::new(name, "A tool.", json!({"type": "object"}))].into()
    };
    let (first, second) = (toolbox("alpha_tool"), toolbox("beta_tool"));
    let ask = |tools: &Arc<[ToolSpec]>, instructions: &str| {
        ModelRequest::new(
            vec![Message::system(instructions), Message::user("hi")],
            tools.clone(),
        )
    };
    model.complete(&ask(&first, "First.")).await.unwrap();
    model.complete(&ask(&first, "Again.")).await.unwrap();
    model.complete(&ask(&second, "")).await.unwrap();
    let mut systems = Vec::new();
    for i in 0..3 {
        systems.push(messages(&body_of(&server, i).await)[0].1.clone());
    }
    let [a, b, c] = <[String; 3]>::try_from(systems).unwrap();
    assert!(
        a.starts_with("First.\n\nYou have these tools:") && a.contains("alpha_tool"),
        "{a}"
    );
    assert_eq!(b.replacen("Again.", "First.", 1), a);
    assert!(
        c.starts_with("You have these tools:") && c.contains("beta_tool"),
        "{c}"
    );
    assert!(!c.contains("alpha_tool"), "{c}");
}

//! JSON-RPC as the MCP specification asks for it, where rmcp answers otherwise: a message that is not JSON gets a
//! parse error (`-32700`) instead of silence (stdio) or an HTTP 415 in plain text; `tools/call` whose `arguments`
//! is not an object gets invalid params (`-32602`) instead of method not found; an unknown method's error says
//! "Method not found" and names the method instead of giving the bare name. The same two steps serve both
//! transports: [`screen`] answers a message before rmcp sees it, [`polish`] mends what rmcp answered.

use std::convert::Infallible;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader,
};
use tokio::sync::mpsc;

/// JSON-RPC's parse error.
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's invalid request.
const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC's invalid params.
const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC's method not found.
const METHOD_NOT_FOUND: i64 = -32601;

fn error(id: Value, code: i64, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// The answer Steward gives itself to a message rmcp would answer wrongly, or `None` to let rmcp answer.
pub(crate) fn screen(message: &[u8]) -> Option<Value> {
    let value: Value = match serde_json::from_slice(message) {
        Ok(value) => value,
        Err(e) => {
            return Some(error(
                Value::Null,
                PARSE_ERROR,
                format!("Parse error: the message is not JSON ({e})"),
            ));
        }
    };
    // JSON-RPC batches left MCP with the 2025-06-18 revision; rmcp answers them with a bare HTTP 415.
    if value.is_array() {
        return Some(error(
            Value::Null,
            INVALID_REQUEST,
            "Invalid Request: send one JSON-RPC message at a time (MCP takes no batches)"
                .to_owned(),
        ));
    }
    if !value.is_object() {
        return Some(error(
            Value::Null,
            INVALID_REQUEST,
            format!(
                "Invalid Request: a JSON-RPC message is an object, not {}",
                kind(&value)
            ),
        ));
    }
    let id = value.get("id")?.clone();
    if value.get("method").and_then(Value::as_str) != Some("tools/call") {
        return None;
    }
    let params = value.get("params");
    let problem = match params {
        Some(Value::Object(params)) => match (params.get("name"), params.get("arguments")) {
            (Some(Value::String(_)), None | Some(Value::Object(_) | Value::Null)) => return None,
            (Some(Value::String(name)), Some(other)) => format!(
                "`arguments` of tools/call must be an object of the tool's arguments (see tools/list for \
                 `{name}`'s inputSchema), not {}",
                kind(other)
            ),
            (None, _) => {
                "tools/call needs `name`, the tool to call (tools/list lists them)".to_owned()
            }
            (Some(other), _) => {
                format!("`name` of tools/call must be a string, not {}", kind(other))
            }
        },
        None => "tools/call needs params: {\"name\": TOOL, \"arguments\": {...}}".to_owned(),
        Some(other) => format!(
            "params of tools/call must be an object, not {}",
            kind(other)
        ),
    };
    Some(error(
        id,
        INVALID_PARAMS,
        format!("Invalid params: {problem}"),
    ))
}

/// A JSON value's kind, in words.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Mends what rmcp answered: its method-not-found error gives only the method's name.
pub(crate) fn polish(response: &mut Value) {
    let Some(error) = response.get_mut("error") else {
        return;
    };
    if error.get("code").and_then(Value::as_i64) != Some(METHOD_NOT_FOUND) {
        return;
    }
    if let Some(message) = error.get("message").and_then(Value::as_str)
        && !message.starts_with("Method not found")
    {
        error["message"] = json!(format!(
            "Method not found: `{message}` is not a method this server offers (it serves tools and resources)"
        ));
    }
}

/// [`screen`] and [`polish`] for MCP over HTTP: a layer around `/mcp` (see `McpServer::http_router`); a body
/// over `limit` bytes is refused before it is read further (413), whatever its content.
pub(crate) async fn http(
    axum::extract::State(limit): axum::extract::State<usize>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, limit).await {
        Ok(bytes) => bytes,
        Err(_) => {
            let answer = error(
                Value::Null,
                PARSE_ERROR,
                format!("the MCP message is larger than this server takes ({limit} bytes)"),
            );
            return (StatusCode::PAYLOAD_TOO_LARGE, axum::Json(answer)).into_response();
        }
    };
    if let Some(answer) = screen(&bytes) {
        let status = if answer["error"]["code"] == PARSE_ERROR || answer["id"].is_null() {
            StatusCode::BAD_REQUEST
        } else {
            StatusCode::OK
        };
        return (status, axum::Json(answer)).into_response();
    }
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    let json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_SCREENED).await else {
        return (
            StatusCode::INTERNAL_SERVER_ERROR,
            "the MCP answer could not be read",
        )
            .into_response();
    };
    let body = match serde_json::from_slice::<Value>(&bytes) {
        Ok(mut value) => {
            polish(&mut value);
            Bytes::from(value.to_string())
        }
        Err(_) => bytes,
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(body))
}

/// The most of an answer the HTTP layer reads to mend it.
const MAX_SCREENED: usize = 64 * 1024 * 1024;

/// The longest message read from standard input (rmcp's own limit): a longer line is answered with a parse
/// error and skipped, not held.
const MAX_LINE: usize = 16 * 1024 * 1024;

/// The next line of `input` without its newline: `Ok(None)` at the end, `Err(())` for a line over
/// [`MAX_LINE`] (read to its end and dropped).
async fn next_line<R: AsyncBufRead + Unpin>(
    input: &mut R,
) -> std::io::Result<Option<Result<Vec<u8>, ()>>> {
    let mut line = Vec::new();
    let mut over = false;
    loop {
        let chunk = input.fill_buf().await?;
        if chunk.is_empty() {
            return Ok((!line.is_empty() || over).then_some(if over { Err(()) } else { Ok(line) }));
        }
        let (taken, done) = match chunk.iter().position(|b| *b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        if !over {
            line.extend_from_slice(&chunk[..taken]);
            if line.len() > MAX_LINE + 1 {
                over = true;
                line = Vec::new();
            }
        }
        input.consume(taken);
        if done {
            if over {
                return Ok(Some(Err(())));
            }
            while matches!(line.last(), Some(b'\n' | b'\r')) {
                line.pop();
            }
            return Ok(Some(Ok(line)));
        }
    }
}

/// [`screen`] and [`polish`] for MCP over stdio: `input` and `output` are the process's standard input and
/// output; returns the pair rmcp speaks on. One line is one message each way.
pub(crate) fn stdio<I, O>(
    input: I,
    output: O,
) -> (
    impl AsyncRead + Send + Unpin + 'static,
    impl AsyncWrite + Send + Unpin + 'static,
)
where
    I: AsyncRead + Send + Unpin + 'static,
    O: AsyncWrite + Send + Unpin + 'static,
{
    let (rmcp_reads, mut to_rmcp) = tokio::io::duplex(1 << 16);
    let (from_rmcp, rmcp_writes) = tokio::io::duplex(1 << 16);
    let (answers, mut own) = mpsc::unbounded_channel::<Value>();
    tokio::spawn(async move {
        let mut input = BufReader::new(input);
        // Bytes, not text: a line that is not UTF-8 gets a parse error, and the session goes on.
        while let Ok(Some(read)) = next_line(&mut input).await {
            let line = match read {
                Ok(line) => line,
                Err(()) => {
                    let answer = error(
                        Value::Null,
                        PARSE_ERROR,
                        format!("Parse error: the message is longer than {MAX_LINE} bytes"),
                    );
                    if answers.send(answer).is_err() {
                        break;
                    }
                    continue;
                }
            };
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match screen(&line) {
                Some(answer) => {
                    if answers.send(answer).is_err() {
                        break;
                    }
                }
                None => {
                    let sent = async {
                        to_rmcp.write_all(&line).await?;
                        to_rmcp.write_all(b"\n").await?;
                        to_rmcp.flush().await
                    };
                    if sent.await.is_err() {
                        break;
                    }
                }
            }
        }
        // Dropping the pipe ends rmcp's input: the client closed standard input.
    });
    tokio::spawn(async move {
        let mut output = output;
        let mut lines = BufReader::new(from_rmcp).lines();
        loop {
            let text = tokio::select! {
                line = lines.next_line() => match line {
                    Ok(Some(line)) => match serde_json::from_str::<Value>(&line) {
                        Ok(mut value) => {
                            polish(&mut value);
                            value.to_string()
                        }
                        Err(_) => line,
                    },
                    _ => break,
                },
                Some(answer) = own.recv() => answer.to_string(),
            };
            let written = async {
                output.write_all(text.as_bytes()).await?;
                output.write_all(b"\n").await?;
                output.flush().await
            };
            if written.await.is_err() {
                break;
            }
        }
        Ok::<(), Infallible>(())
    });
    (rmcp_reads, rmcp_writes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_rmcp_would_misanswer_are_answered_by_the_specification() {
        let parse = screen(b"{not json").unwrap();
        assert_eq!(parse["error"]["code"], PARSE_ERROR);
        assert_eq!(parse["id"], Value::Null);
        for arguments in [json!("SELECT 1"), json!([1]), json!(5), json!(true)] {
            let message = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                                 "params": {"name": "run_sql", "arguments": arguments}});
            let answer = screen(message.to_string().as_bytes()).unwrap();
            assert_eq!(answer["error"]["code"], INVALID_PARAMS, "{answer}");
            assert_eq!(answer["id"], 7);
            assert!(
                answer["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("must be an object")
            );
        }
        for params in [json!({"arguments": {}}), json!("x"), json!({"name": 3})] {
            let message =
                json!({"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": params});
            let answer = screen(message.to_string().as_bytes()).unwrap();
            assert_eq!(answer["error"]["code"], INVALID_PARAMS, "{answer}");
        }
        for odd in [
            json!([{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}]),
            json!([]),
            json!("x"),
            json!(3),
        ] {
            let answer = screen(odd.to_string().as_bytes()).unwrap();
            assert_eq!(answer["error"]["code"], INVALID_REQUEST, "{odd}: {answer}");
        }
        let no_params = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call"});
        assert_eq!(
            screen(no_params.to_string().as_bytes()).unwrap()["error"]["code"],
            INVALID_PARAMS
        );
        for fine in [
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x", "arguments": {}}}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
        ] {
            assert_eq!(screen(fine.to_string().as_bytes()), None, "{fine}");
        }
    }

    #[test]
    fn an_unknown_method_is_said_to_be_one() {
        let mut answer = error(json!(3), METHOD_NOT_FOUND, "nope/nope".to_owned());
        polish(&mut answer);
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with("Method not found: `nope/nope`"),
            "{message}"
        );
        let mut other = error(json!(3), INVALID_PARAMS, "x".to_owned());
        polish(&mut other);
        assert_eq!(other["error"]["message"], "x");
    }
}

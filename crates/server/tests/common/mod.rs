//! An in-process server on a real loopback socket, the config the API tests share (API tokens, OIDC tokens
//! signed by the test keys of `tests/keys/`), and a client for it.
#![allow(
    dead_code,
    unreachable_pub,
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use steward_app::store::RunStore;
use steward_app::{App, AppOptions, Config};
use steward_core::{Message, Model, ModelError, ModelRequest, ModelResponse};
use steward_server::{ModelChoice, Server, ServerOptions, token_hash};

/// Answers "echo: <the last user message>"; fails as an unreachable provider when that message is "fail, model".
#[derive(Debug)]
pub struct Echo;

#[async_trait::async_trait]
impl Model for Echo {
    fn name(&self) -> &str {
        "echo"
    }

    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let last = request
            .messages
            .iter()
            .rev()
            .find_map(|m| match m {
                Message::User { content } => Some(content.clone()),
                _ => None,
            })
            .unwrap_or_default();
        if last == "fail, model" {
            // A provider that cannot be reached; its message names an endpoint the client must not see.
            return Err(ModelError::Transport {
                provider: "echo".into(),
                message: "http://10.9.8.7:1234/v1 refused the connection".into(),
            });
        }
        Ok(ModelResponse::text(format!(
            "echo: {last} ({} messages)",
            request.messages.len()
        )))
    }
}

pub const ADA: &str = "token-of-ada";
pub const VIC: &str = "token-of-vic";
pub const ROOT: &str = "token-of-root";

pub fn keys() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/keys")
}

/// Agents and roles (`clerk` runs `assistant`, `viewer` runs `helper`, `admin`), principals `ada` (a clerk,
/// customer 7) and `vic` (a viewer), then `server:` with `server` below it (indented by two spaces).
pub fn config_with_server(server: &str) -> Config {
    let text = format!(
        r#"
agents:
  helper:
    description: Helps with sums.
    instructions: You help with sums.
    tools: [calculator]
roles:
  clerk:
    agents: [assistant]
  viewer:
    agents: [helper]
  admin:
    admin: true
principals:
  ada: {{role: clerk, customer_id: 7}}
  vic: {{role: viewer}}
server:
{server}"#
    );
    Config::parse(&text, &keys().join("steward.yaml")).unwrap()
}

/// The API tests' config: tokens for ada, vic and root (an administrator), OIDC against the test keys with
/// the role from the `role` claim, and `extra` lines under `server:`.
pub fn config(extra: &str) -> Config {
    config_with_server(&format!(
        r#"  tokens:
    - {{name: ada, sha256: {ada}, principal: ada}}
    - {{name: vic, sha256: {vic}, principal: vic}}
    - {{name: root, sha256: {root}, role: admin}}
  oidc:
    jwks: {jwks}
    issuer: https://login.example.test/
    audience: steward
    role_claim: role
    claims: {{customer: customer_id}}
{extra}"#,
        ada = token_hash(ADA),
        vic = token_hash(VIC),
        root = token_hash(ROOT),
        jwks = keys().join("jwks.json").display(),
    ))
}

pub struct Running {
    pub base: String,
    pub client: reqwest::Client,
    pub _dir: PathBuf,
}

/// A server with [`config`]`(extra)` on 127.0.0.1.
pub async fn start(extra: &str) -> Running {
    serve(config(extra), |server| server).await
}

/// A server with `config` on a free port of 127.0.0.1, made by `tune` from the default one, served as
/// `steward serve` serves it.
pub async fn serve(config: Config, tune: impl FnOnce(Server) -> Server) -> Running {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "api-{}-{}",
        std::process::id(),
        uuid::Uuid::now_v7().simple()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let store = RunStore::open(Some(&format!("sqlite://{}/store.sqlite", dir.display())))
        .await
        .unwrap();
    let app = App::build(
        config,
        AppOptions {
            db: None,
            demo: None,
            clock: steward_domains::common::Clock::System,
            store: Some(store),
        },
    )
    .await
    .unwrap();
    let server = Server::new(ServerOptions {
        app: Arc::new(app),
        models: ModelChoice::fixed(Arc::new(Echo)),
        loopback: true,
    })
    .await
    .unwrap();
    let server = tune(server);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(server.serve(listener, Duration::from_secs(5), std::future::pending()));
    Running {
        base,
        client: reqwest::Client::new(),
        _dir: dir,
    }
}

impl Running {
    /// `host:port` of the server, as a client that reached it at its address sends in `Host`.
    pub fn authority(&self) -> &str {
        self.base.trim_start_matches("http://")
    }

    /// The port the server listens on.
    pub fn port(&self) -> &str {
        self.authority().rsplit(':').next().unwrap()
    }

    /// A request to `path`, to finish with headers and send with [`Running::send`].
    pub fn request(&self, method: &str, path: &str) -> reqwest::RequestBuilder {
        self.client
            .request(method.parse().unwrap(), format!("{}{path}", self.base))
    }

    /// Sends `request`: the status, the `Retry-After` header if any, and the body.
    pub async fn send(&self, request: reqwest::RequestBuilder) -> (u16, Option<String>, String) {
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get("retry-after")
            .map(|v| v.to_str().unwrap().to_owned());
        (status, retry_after, response.text().await.unwrap())
    }

    pub async fn call(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> (u16, String) {
        let mut request = self.request(method, path);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body.to_string());
        }
        let (status, _, text) = self.send(request).await;
        (status, text)
    }

    pub async fn json(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> (u16, Value) {
        let (status, text) = self.call(method, path, token, body).await;
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }
}

/// The `data:` payloads of a server-sent event stream.
pub fn events(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str(d).ok())
        .collect()
}

pub fn jwt(kid: &str, pem: &str, alg: Algorithm, claims: Value) -> String {
    let mut header = Header::new(alg);
    header.kid = Some(kid.to_owned());
    let key = std::fs::read(keys().join(pem)).unwrap();
    let key = match alg {
        Algorithm::ES256 => EncodingKey::from_ec_pem(&key).unwrap(),
        _ => EncodingKey::from_rsa_pem(&key).unwrap(),
    };
    jsonwebtoken::encode(&header, &claims, &key).unwrap()
}

pub fn claims(sub: &str, role: &str) -> Value {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    json!({"sub": sub, "role": role, "customer": 42, "iss": "https://login.example.test/",
           "aud": "steward", "exp": now + 600, "iat": now})
}

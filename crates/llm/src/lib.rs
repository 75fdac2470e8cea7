//! # steward-llm
//!
//! Model providers behind steward-core's [`Model`](steward_core::Model) trait: OpenAI, Azure OpenAI (both URL
//! forms), OpenAI-compatible servers (Ollama, vLLM, llama.cpp's server, LM Studio) with their known quirks
//! handled, and Anthropic's Messages API. Every provider streams, retries what is worth retrying (429, 5xx,
//! connection resets, honouring `Retry-After`), names itself, the HTTP status and the provider's own text in
//! its errors, and never lets a key into an error. [`ReactModel`] drives models without native tool calling;
//! [`Recorder`] and [`ReplayModel`] record runs and play them back.
//!
//! ```no_run
//! use steward_llm::{Env, ModelSetup, connect};
//! # async fn demo() -> Result<(), steward_llm::Error> {
//! // `--model` when given, else STEWARD_MODEL, else OPENAI_API_KEY / ANTHROPIC_API_KEY / Azure / a local Ollama.
//! let model = connect(ModelSetup { spec: Some("ollama:qwen2.5:7b".into()), ..ModelSetup::default() }, &Env::from_process()).await?;
//! # let _ = model; Ok(()) }
//! ```

mod anthropic;
mod error;
mod http;
mod openai;
mod pricing;
mod quirks;
mod react;
mod replay;
mod resolve;
mod schemas;
mod sse;

pub use anthropic::{AnthropicConfig, AnthropicModel};
pub use error::Error;
pub use http::{HttpOptions, RetryHook, RetryNotice, RetryPolicy, Secret, Timeouts};
pub use openai::{Auth, Flavor, OpenAiConfig, OpenAiModel};
pub use pricing::{Price, PriceTable};
pub use react::{ReactModel, ReactStyle};
pub use replay::{Recorder, ReplayModel};
pub use resolve::{
    DEFAULT_ANTHROPIC_MODEL, DEFAULT_AZURE_API_VERSION, DEFAULT_OPENAI_MODEL, Env, Mode,
    ModelSetup, ModelSpec, OLLAMA_DEFAULT_URL, Resolved, connect, connect_spec, no_model_guidance,
    resolve,
};

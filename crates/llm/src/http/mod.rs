//! HTTP for providers: timeouts, retries with exponential backoff and jitter, `Retry-After`, the provider's own
//! error text in every error, and secrets kept out of all of it.
//!
//! - `policy`: the settings (timeouts, retry policy, retry hook) and the decisions made from them: what is
//!   worth retrying and how long to wait.
//! - `client`: the provider's client: a POST with its retry loop, and reading reply bodies.
//! - `error_text`: the errors a call ends in, with the provider's own text, redacted, then cut.
//! - `secret`: keys and tokens that never show.

mod client;
mod error_text;
mod policy;
mod secret;

pub(crate) use client::Http;
pub(crate) use error_text::{cut, provider_message};
pub use policy::{HttpOptions, RetryHook, RetryNotice, RetryPolicy, Timeouts};
pub use secret::Secret;

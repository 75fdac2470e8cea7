//! Data marking: what a tool reads from outside the run reaches the model wrapped as data, so planted
//! instructions read as data.

use std::collections::BTreeSet;

use serde_json::Value;
use steward_core::ToolSpec;

use super::policy::PURE_TOOLS;

/// A tool whose results are data from outside the run (rows, an HTTP response): its observation is wrapped in
/// `<data source="…">` … `</data>`, so that the model reads it as data, never as instructions (the agents'
/// rules say so). A closing tag inside the data, however it is spelt, is escaped so it cannot end the wrapper
/// early ([`steward_core::data::escape`]).
pub(crate) struct MarkedData {
    pub(crate) inner: std::sync::Arc<dyn steward_core::Tool>,
}

#[async_trait::async_trait]
impl steward_core::Tool for MarkedData {
    fn spec(&self) -> &ToolSpec {
        self.inner.spec()
    }

    fn stages(&self) -> bool {
        self.inner.stages()
    }

    fn applier(&self) -> Option<std::sync::Arc<dyn steward_core::Applier>> {
        self.inner.applier()
    }

    async fn preview(&self, ctx: &steward_core::ToolContext, args: Value) -> Option<String> {
        self.inner.preview(ctx, args).await
    }

    async fn call(
        &self,
        ctx: &steward_core::ToolContext,
        args: Value,
    ) -> Result<steward_core::ToolOutput, steward_core::ToolError> {
        let mut output = self.inner.call(ctx, args).await?;
        output.content = mark_data(&self.inner.spec().name, &output.content);
        Ok(output)
    }
}

/// `content` wrapped as data from `source`.
pub(crate) fn mark_data(source: &str, content: &str) -> String {
    let escaped = steward_core::data::escape(content);
    format!("<data source=\"{source}\">\n{escaped}\n</data>")
}

/// What the `<data source=…>` wrapper holds (see `mark_data`), without the wrapper (`content` itself when it is not wrapped).
pub fn unmark_data(content: &str) -> &str {
    content
        .strip_prefix("<data source=\"")
        .and_then(|rest| rest.split_once("\">\n"))
        .and_then(|(_, inner)| inner.strip_suffix("\n</data>"))
        .unwrap_or(content)
}

/// True when `tool`'s results are data from outside the run (it reads: read-only or open-world), for a role
/// that trusts `trusted`.
pub(crate) fn reads_data(spec: &ToolSpec, trusted: &BTreeSet<String>) -> bool {
    let name = spec.name.as_str();
    (spec.annotations.read_only || spec.annotations.open_world)
        && !PURE_TOOLS.contains(&name)
        && !trusted.contains(name)
}

//! The MCP server: the configured tools, `ask_database` and the schema as resources, over stdio and streamable HTTP.

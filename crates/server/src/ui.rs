//! The web UI: static files built into the binary.

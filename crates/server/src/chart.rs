//! Charts for numeric results, rendered on the server as SVG.

-- The tool whose result first brought outside data into the turn that wrote an assistant message: the next turn
-- of the conversation starts tainted from this column, without reading the message's events back. Messages
-- written before get it from the events they kept (filled in by the migrator, which parses them: see
-- `migrate.rs`).
ALTER TABLE conversation_messages ADD COLUMN tainted_by TEXT;

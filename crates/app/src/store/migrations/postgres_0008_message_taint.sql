-- The tool whose result first brought outside data into the turn that wrote an assistant message: the next turn
-- of the conversation starts tainted from this column, without reading the message's events back. Messages
-- written before get it from the events they kept (always a JSON array of events).
ALTER TABLE conversation_messages ADD COLUMN tainted_by TEXT;
UPDATE conversation_messages SET tainted_by = (
    SELECT e.value ->> 'tainted_by' FROM jsonb_array_elements(conversation_messages.events::jsonb) AS e(value)
    WHERE jsonb_typeof(e.value) = 'object' AND e.value ->> 'tainted_by' IS NOT NULL LIMIT 1)
WHERE events LIKE '%tainted_by%' AND jsonb_typeof(events::jsonb) = 'array';

-- The tool whose result first brought outside data into the turn that wrote an assistant message: the next turn
-- of the conversation starts tainted from this column, without reading the message's events back. Messages
-- written before get it from the events they kept.
ALTER TABLE conversation_messages ADD COLUMN tainted_by TEXT;
UPDATE conversation_messages SET tainted_by = (
    SELECT json_extract(e.value, '$.tainted_by') FROM json_each(conversation_messages.events) AS e
    WHERE json_type(e.value) = 'object' AND json_extract(e.value, '$.tainted_by') IS NOT NULL LIMIT 1)
WHERE events LIKE '%tainted_by%' AND json_valid(events);

-- Attacks on the SQL guard, by class. `crates/sql/tests/attacks.rs` runs every block through
-- `Database::query` with the live guard on each engine listed, and checks that it was held, by its effect.
--
-- Header lines of a block:
--   name:    a unique id
--   engines: postgres, postgres_scs_off (standard_conforming_strings off), mariadb, sqlite
--   expect:  held
--   effect:  what must not happen (one or more, space separated):
--            canary   the rows of table canary are unchanged
--            file     the file {file} does not exist afterwards
--            time     it returns in well under the 3 s it asks for
--            alive    the other live connection {pid} still answers
--            rows     it returns no rows (a refusal or an error counts)
--            error    it does not succeed (a refusal or an engine error)
--            secret:T no cell returned contains the text T
--            sequence the sequence canary_seq did not move
--            locks    no advisory or user lock is left held
--            setting  the session setting it changes is unchanged in a new query
--            tables   no table was created
--            objects  no large object was created
--   guard:   the reason code the guard (offline and live) gives
-- Placeholders: {file} is a fresh path under /tmp, {pid} the id of another live connection.
-- Everything after the header lines, up to the next `-- name:`, is the SQL, sent as it is.
-- The tables, sequences and functions the blocks use are made by setup/<engine>.sql. `steward eval guard`
-- runs the same corpus as a benchmark (held / escaped by class, false refusals).

-- ## Stacked statements hidden by quote, escape and comment tricks

-- name: backslash_quote_standard_strings
-- engines: postgres, sqlite
-- expect: held
-- effect: canary
-- guard: multiple_statements
SELECT '\'; DELETE FROM canary; --'

-- name: backslash_quote_escaping_strings
-- engines: postgres_scs_off
-- expect: held
-- effect: canary
-- guard: multiple_statements
SELECT '\''; DELETE FROM canary; --'

-- name: double_backslash_mariadb
-- engines: mariadb
-- expect: held
-- effect: canary
-- guard: multiple_statements
SELECT '\\'; DELETE FROM canary; -- '

-- name: escaped_quote_mariadb
-- engines: mariadb
-- expect: held
-- effect: canary
-- guard: multiple_statements
SELECT 'a\''; DELETE FROM canary; -- '

-- name: e_string_escape
-- engines: postgres, postgres_scs_off
-- expect: held
-- effect: canary
-- guard: multiple_statements
SELECT E'\''; DELETE FROM canary; --'

-- name: e_string_continued_over_newline
-- engines: postgres, postgres_scs_off
-- expect: held
-- effect: canary
-- guard: multiple_statements
SELECT E'x'
'\''; DELETE FROM canary; --'

-- name: nested_comment_postgres
-- engines: postgres
-- expect: held
-- effect: canary
-- guard: multiple_statements
SELECT 1 /* /* */ '*/ ; DELETE FROM canary; --'

-- name: dollar_quote_tag
-- engines: postgres
-- expect: held
-- effect: canary
-- guard: multiple_statements
SELECT $a$ $b$ $a$; DELETE FROM canary; -- $b$

-- name: hash_comment_mariadb
-- engines: mariadb
-- expect: held
-- effect: canary
-- guard: multiple_statements
SELECT 1 #'
; DELETE FROM canary; -- '

-- name: double_quoted_string_mariadb
-- engines: mariadb
-- expect: held
-- effect: canary
-- guard: multiple_statements
SELECT "'"; DELETE FROM canary; -- '

-- name: tcl_variable_sqlite
-- engines: sqlite
-- expect: held
-- effect: canary
-- guard: multiple_statements
SELECT @a(');DELETE FROM canary;--')

-- name: bracket_name_sqlite
-- engines: sqlite
-- expect: held
-- effect: canary
-- guard: multiple_statements
SELECT 1 AS [x'], 1; DELETE FROM canary; --']

-- name: plain_stacked_delete
-- engines: postgres, mariadb, sqlite
-- expect: held
-- effect: canary
-- guard: multiple_statements
SELECT 1; DELETE FROM canary

-- name: stacked_after_line_comment
-- engines: postgres, mariadb, sqlite
-- expect: held
-- effect: canary
-- guard: multiple_statements
SELECT 1 -- harmless?
; DELETE FROM canary

-- ## Writes inside a read

-- name: data_modifying_cte
-- engines: postgres
-- expect: held
-- effect: canary
-- guard: data_modifying_cte
WITH d AS (DELETE FROM canary RETURNING *) SELECT count(*) FROM d

-- name: cte_then_delete
-- engines: sqlite, mariadb
-- expect: held
-- effect: canary
-- guard: data_modifying_cte
WITH x AS (SELECT 1) DELETE FROM canary

-- name: explain_analyze_delete
-- engines: postgres, mariadb
-- expect: held
-- effect: canary
-- guard: not_read_only
EXPLAIN ANALYZE DELETE FROM canary

-- name: select_into_table
-- engines: postgres
-- expect: held
-- effect: tables
-- guard: select_into
SELECT * INTO canary_copy FROM canary

-- name: create_table_as
-- engines: postgres, mariadb, sqlite
-- expect: held
-- effect: tables
-- guard: not_read_only
CREATE TABLE canary_copy AS SELECT * FROM canary

-- name: locking_read_for_update
-- engines: postgres, mariadb
-- expect: held
-- effect: error
-- guard: locking_read
SELECT * FROM canary FOR UPDATE

-- name: locking_read_share_mode
-- engines: mariadb
-- expect: held
-- effect: error
-- guard: locking_read
SELECT * FROM canary LOCK IN SHARE MODE

-- name: for_update_hidden_in_subquery
-- engines: postgres
-- expect: held
-- effect: error
-- guard: locking_read
SELECT * FROM (SELECT * FROM canary FOR UPDATE) c

-- ## Files: read and write

-- name: pg_read_file_passwd
-- engines: postgres
-- expect: held
-- effect: secret:root: rows
-- guard: forbidden_function
SELECT pg_read_file('/etc/passwd')

-- name: pg_read_file_as_table
-- engines: postgres
-- expect: held
-- effect: secret:root: rows
-- guard: forbidden_function
SELECT * FROM pg_catalog.pg_read_file('/etc/passwd') AS f(t)

-- name: pg_read_binary_file
-- engines: postgres
-- expect: held
-- effect: secret:root: rows
-- guard: forbidden_function
SELECT convert_from(pg_read_binary_file('/etc/passwd'), 'UTF8')

-- name: copy_to_file
-- engines: postgres
-- expect: held
-- effect: file
-- guard: copy
COPY (SELECT * FROM canary) TO '{file}'

-- name: copy_to_program
-- engines: postgres
-- expect: held
-- effect: file
-- guard: copy
COPY (SELECT 1) TO PROGRAM 'touch {file}'

-- name: lo_export_file
-- engines: postgres
-- expect: held
-- effect: file objects
-- guard: forbidden_function
SELECT lo_export(lo_from_bytea(0, 'x'), '{file}')

-- name: into_outfile
-- engines: mariadb
-- expect: held
-- effect: file
-- guard: select_into
SELECT * FROM canary INTO OUTFILE '{file}'

-- name: into_dumpfile
-- engines: mariadb
-- expect: held
-- effect: file
-- guard: select_into
SELECT v FROM canary LIMIT 1 INTO DUMPFILE '{file}'

-- name: into_outfile_before_from
-- engines: mariadb
-- expect: held
-- effect: file
-- guard: select_into
SELECT * INTO OUTFILE '{file}' FROM canary

-- name: load_file_passwd
-- engines: mariadb
-- expect: held
-- effect: secret:root: rows
-- guard: forbidden_function
SELECT LOAD_FILE('/etc/passwd')

-- name: load_file_quoted_name
-- engines: mariadb
-- expect: held
-- effect: secret:root: rows
-- guard: forbidden_function
SELECT `load_file`('/etc/passwd')

-- name: attach_database
-- engines: sqlite
-- expect: held
-- effect: file
-- guard: attach
ATTACH DATABASE '{file}' AS evil

-- name: vacuum_into
-- engines: sqlite
-- expect: held
-- effect: file
-- guard: not_read_only
VACUUM INTO '{file}'

-- name: sqlite_load_extension
-- engines: sqlite
-- expect: held
-- effect: error
-- guard: forbidden_function
SELECT load_extension('/tmp/steward-no-such-extension')

-- name: sqlite_readfile
-- engines: sqlite
-- expect: held
-- effect: secret:root: rows
-- guard: forbidden_function
SELECT readfile('/etc/passwd')

-- name: sqlite_writefile
-- engines: sqlite
-- expect: held
-- effect: file
-- guard: forbidden_function
SELECT writefile('{file}', 'x')

-- ## Sleeping and waiting

-- name: pg_sleep
-- engines: postgres
-- expect: held
-- effect: time
-- guard: forbidden_function
SELECT pg_sleep(3)

-- name: pg_sleep_qualified_upper_quoted
-- engines: postgres
-- expect: held
-- effect: time
-- guard: forbidden_function
SELECT "pg_catalog"."pg_sleep"(3), PG_SLEEP(0)

-- name: pg_sleep_unicode_escaped
-- engines: postgres
-- expect: held
-- effect: time
-- guard: forbidden_function
SELECT U&"pg\005fsleep"(3)

-- name: pg_sleep_unicode_uescape
-- engines: postgres
-- expect: held
-- effect: time
-- guard: forbidden_function
SELECT U&"pg!005fsleep" UESCAPE '!' (3)

-- name: pg_sleep_for
-- engines: postgres
-- expect: held
-- effect: time
-- guard: forbidden_function
SELECT pg_sleep_for('3 seconds')

-- name: pg_sleep_in_from
-- engines: postgres
-- expect: held
-- effect: time
-- guard: forbidden_function
SELECT * FROM pg_sleep(3)

-- name: pg_sleep_in_subquery
-- engines: postgres
-- expect: held
-- effect: time
-- guard: forbidden_function
SELECT v FROM canary WHERE EXISTS (SELECT pg_sleep(3))

-- name: mariadb_sleep
-- engines: mariadb
-- expect: held
-- effect: time
-- guard: forbidden_function
SELECT SLEEP(3)

-- name: mariadb_benchmark
-- engines: mariadb
-- expect: held
-- effect: time
-- guard: forbidden_function
SELECT BENCHMARK(200000000, MD5('x'))

-- name: get_lock_wait
-- engines: mariadb
-- expect: held
-- effect: locks
-- guard: forbidden_function
SELECT GET_LOCK('steward_lock', 0)

-- ## Executable comments and hints

-- name: executable_comment_sleep
-- engines: mariadb
-- expect: held
-- effect: time
-- guard: executable_comment
SELECT 1 /*!, SLEEP(3) */

-- name: versioned_executable_comment
-- engines: mariadb
-- expect: held
-- effect: time
-- guard: executable_comment
SELECT 1 /*!50000 , SLEEP(3) */

-- name: mariadb_executable_comment
-- engines: mariadb
-- expect: held
-- effect: time
-- guard: executable_comment
SELECT 1 /*M!100000 , SLEEP(3) */

-- name: optimizer_hint_set_var
-- engines: mariadb
-- expect: held
-- effect: error
-- guard: optimizer_hint
SELECT /*+ SET_VAR(max_statement_time = 0) */ 1

-- ## Other sessions and the server

-- name: terminate_other_backend
-- engines: postgres
-- expect: held
-- effect: alive
-- guard: forbidden_function
SELECT pg_terminate_backend({pid})

-- name: cancel_other_backend
-- engines: postgres
-- expect: held
-- effect: alive
-- guard: forbidden_function
SELECT pg_cancel_backend({pid})

-- name: terminate_every_backend
-- engines: postgres
-- expect: held
-- effect: alive
-- guard: forbidden_function
SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()

-- name: kill_connection
-- engines: mariadb
-- expect: held
-- effect: alive
-- guard: not_read_only
KILL {pid}

-- name: reload_conf
-- engines: postgres
-- expect: held
-- effect: error
-- guard: forbidden_function
SELECT pg_reload_conf()

-- name: stat_reset
-- engines: postgres
-- expect: held
-- effect: error
-- guard: forbidden_function
SELECT pg_stat_reset()

-- name: log_memory_contexts
-- engines: postgres
-- expect: held
-- effect: error
-- guard: forbidden_function
SELECT pg_log_backend_memory_contexts({pid})

-- ## Settings

-- name: set_config_search_path
-- engines: postgres
-- expect: held
-- effect: setting
-- guard: forbidden_function
SELECT set_config('search_path', 'pg_temp', false)

-- name: set_statement
-- engines: postgres, mariadb
-- expect: held
-- effect: error
-- guard: set
SET statement_timeout = 0

-- name: user_variable_assignment
-- engines: mariadb
-- expect: held
-- effect: setting
-- guard: variable_assignment
SELECT @steward_var := 'set'

-- name: select_into_variable
-- engines: mariadb
-- expect: held
-- effect: setting
-- guard: select_into
SELECT 'set' INTO @steward_var

-- name: pragma_query_only
-- engines: sqlite
-- expect: held
-- effect: error
-- guard: pragma
PRAGMA query_only = OFF

-- ## Sequences, locks and large objects

-- name: nextval
-- engines: postgres
-- expect: held
-- effect: sequence
-- guard: forbidden_function
SELECT nextval('canary_seq')

-- name: setval
-- engines: postgres
-- expect: held
-- effect: sequence
-- guard: forbidden_function
SELECT setval('canary_seq', 100)

-- name: mariadb_nextval
-- engines: mariadb
-- expect: held
-- effect: sequence
-- guard: forbidden_function
SELECT NEXTVAL(canary_seq)

-- name: mariadb_next_value_for
-- engines: mariadb
-- expect: held
-- effect: sequence
-- guard: forbidden_function
SELECT NEXT VALUE FOR canary_seq

-- name: advisory_lock
-- engines: postgres
-- expect: held
-- effect: locks
-- guard: forbidden_function
SELECT pg_advisory_lock(4242)

-- name: try_advisory_lock
-- engines: postgres
-- expect: held
-- effect: locks
-- guard: forbidden_function
SELECT pg_try_advisory_lock(4242)

-- name: lo_import
-- engines: postgres
-- expect: held
-- effect: objects
-- guard: forbidden_function
SELECT lo_import('/etc/passwd')

-- name: lo_create
-- engines: postgres
-- expect: held
-- effect: objects
-- guard: forbidden_function
SELECT lo_create(0)

-- ## SQL given as a string

-- name: query_to_xml_delete
-- engines: postgres
-- expect: held
-- effect: canary
-- guard: forbidden_function
SELECT query_to_xml('DELETE FROM canary RETURNING 1', true, true, '')

-- name: query_to_xml_reads_authid
-- engines: postgres
-- expect: held
-- effect: secret:postgres
-- guard: forbidden_function
SELECT query_to_xml('SELECT rolname FROM pg_authid', true, true, '')

-- name: ts_stat_query
-- engines: postgres
-- expect: held
-- effect: error
-- guard: forbidden_function
SELECT * FROM ts_stat('SELECT to_tsvector(rolname) FROM pg_authid')

-- name: table_to_xml_authid
-- engines: postgres
-- expect: held
-- effect: secret:postgres
-- guard: forbidden_function
SELECT table_to_xml('pg_authid', true, true, '')

-- ## Sensitive catalogs

-- name: pg_authid
-- engines: postgres
-- expect: held
-- effect: rows
-- guard: sensitive_catalog
SELECT rolname, rolpassword FROM pg_authid

-- name: pg_shadow_qualified_quoted
-- engines: postgres
-- expect: held
-- effect: rows
-- guard: sensitive_catalog
SELECT * FROM "pg_catalog"."pg_shadow"

-- name: pg_authid_unicode_escaped
-- engines: postgres
-- expect: held
-- effect: rows
-- guard: sensitive_catalog
SELECT * FROM U&"pg\005fauthid"

-- name: pg_authid_table_statement
-- engines: postgres
-- expect: held
-- effect: rows
-- guard: sensitive_catalog
TABLE pg_authid

-- name: pg_stat_activity
-- engines: postgres
-- expect: held
-- effect: rows
-- guard: sensitive_catalog
SELECT pid, query FROM pg_stat_activity

-- name: pg_hba_file_rules
-- engines: postgres
-- expect: held
-- effect: rows
-- guard: sensitive_catalog
SELECT * FROM pg_hba_file_rules

-- name: pg_file_settings
-- engines: postgres
-- expect: held
-- effect: rows
-- guard: sensitive_catalog
SELECT * FROM PG_FILE_SETTINGS

-- name: pg_statistic
-- engines: postgres
-- expect: held
-- effect: rows
-- guard: sensitive_catalog
SELECT * FROM pg_statistic

-- name: pg_stat_get_activity
-- engines: postgres
-- expect: held
-- effect: rows
-- guard: forbidden_function
SELECT * FROM pg_stat_get_activity(NULL)

-- name: mysql_user
-- engines: mariadb
-- expect: held
-- effect: rows
-- guard: sensitive_catalog
SELECT User, Password FROM mysql.user

-- name: mysql_global_priv_backticks
-- engines: mariadb
-- expect: held
-- effect: rows
-- guard: sensitive_catalog
SELECT * FROM `MYSQL`.`global_priv`

-- name: processlist
-- engines: mariadb
-- expect: held
-- effect: rows
-- guard: sensitive_catalog
SELECT ID, INFO FROM information_schema.PROCESSLIST

-- name: performance_schema
-- engines: mariadb
-- expect: held
-- effect: rows
-- guard: sensitive_catalog
SELECT * FROM performance_schema.threads

-- ## Administrative statements

-- name: drop_table
-- engines: postgres, mariadb, sqlite
-- expect: held
-- effect: canary
-- guard: not_read_only
DROP TABLE canary

-- name: commit_then_delete
-- engines: postgres, mariadb, sqlite
-- expect: held
-- effect: canary
-- guard: multiple_statements
COMMIT; DELETE FROM canary

-- name: mixed_case_delete
-- engines: postgres, mariadb, sqlite
-- expect: held
-- effect: canary
-- guard: not_read_only
  dElEtE   FROM canary WHERE 1=1

-- ## The database's own functions (only the live guard knows them)

-- name: user_defined_function
-- engines: postgres, mariadb
-- expect: held
-- effect: time
-- guard: forbidden_function
-- offline: allowed
SELECT slow_total()

-- name: user_defined_function_qualified
-- engines: postgres
-- expect: held
-- effect: time
-- guard: forbidden_function
-- offline: allowed
SELECT public.slow_total()

-- name: user_defined_function_attribute_notation
-- engines: postgres
-- expect: held
-- effect: time
-- guard: forbidden_function
-- offline: allowed
SELECT c.slow_row FROM canary c WHERE c.id = 1

-- name: user_defined_operator
-- engines: postgres
-- expect: held
-- effect: time
-- guard: forbidden_function
-- offline: allowed
SELECT 1 === 2

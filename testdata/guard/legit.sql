-- Unusual but legitimate reads. `crates/sql/tests/attacks.rs` runs every block through `Database::query`
-- with the live guard on each engine listed: it must be allowed and return at least one row.
-- The header lines are those of attacks.sql (name, engines, expect: runs); the tables are
-- projects(id, name, status, created, meta), tasks(id, project_id, title, hours, done), labels(id, trim), made by
-- setup/<engine>.sql.

-- ## Window functions, FILTER, LATERAL, DISTINCT ON, grouping

-- name: window_functions
-- engines: postgres, mariadb, sqlite
-- expect: runs
SELECT title, hours, SUM(hours) OVER (PARTITION BY project_id ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running, RANK() OVER (ORDER BY hours DESC) AS r, LAG(title) OVER (ORDER BY id) AS previous FROM tasks

-- name: filter_clause
-- engines: postgres, sqlite
-- expect: runs
SELECT COUNT(*) FILTER (WHERE done) AS finished, COUNT(*) AS total FROM tasks

-- name: lateral_join
-- engines: postgres
-- expect: runs
SELECT p.name, t.title FROM projects p CROSS JOIN LATERAL (SELECT title FROM tasks WHERE project_id = p.id ORDER BY hours DESC LIMIT 1) t

-- name: distinct_on
-- engines: postgres
-- expect: runs
SELECT DISTINCT ON (project_id) project_id, title, hours FROM tasks ORDER BY project_id, hours DESC

-- name: grouping_sets
-- engines: postgres
-- expect: runs
SELECT status, project_id, SUM(hours) FROM tasks JOIN projects ON projects.id = tasks.project_id GROUP BY GROUPING SETS ((status), (project_id), ())

-- name: rollup_postgres
-- engines: postgres
-- expect: runs
SELECT status, name, COUNT(*) FROM projects GROUP BY ROLLUP (status, name)

-- name: with_rollup_mariadb
-- engines: mariadb
-- expect: runs
SELECT status, COUNT(*) FROM projects GROUP BY status WITH ROLLUP

-- name: recursive_cte
-- engines: postgres, mariadb, sqlite
-- expect: runs
WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 10) SELECT SUM(x) FROM n

-- ## JSON

-- name: json_operators_postgres
-- engines: postgres
-- expect: runs
SELECT meta->>'owner' AS owner, meta->'tags' AS tags, meta #>> '{tags,0}' AS first_tag FROM projects WHERE meta ? 'owner' AND meta @> '{"owner": "ada"}'

-- name: json_operators_sqlite
-- engines: sqlite
-- expect: runs
SELECT meta->>'$.owner' AS owner, json_extract(meta, '$.tags[0]') AS first_tag FROM projects WHERE json_array_length(meta, '$.tags') > 0

-- name: json_functions_mariadb
-- engines: mariadb
-- expect: runs
SELECT JSON_VALUE(meta, '$.owner') AS owner, JSON_EXTRACT(meta, '$.tags[0]') AS first_tag FROM projects WHERE JSON_LENGTH(meta, '$.tags') > 0

-- ## Dates

-- name: date_math_postgres
-- engines: postgres
-- expect: runs
SELECT name, created + INTERVAL '30 days' AS due, date_trunc('month', created) AS month, AGE(DATE '2025-01-01', created) FROM projects WHERE created >= DATE '2024-01-01' - INTERVAL '1 year'

-- name: date_math_mariadb
-- engines: mariadb
-- expect: runs
SELECT name, DATE_ADD(created, INTERVAL 30 DAY) AS due, DATE_FORMAT(created, '%Y-%m') AS month FROM projects WHERE created > DATE_SUB('2025-01-01', INTERVAL 2 YEAR)

-- name: date_math_sqlite
-- engines: sqlite
-- expect: runs
SELECT name, date(created, '+30 days') AS due, strftime('%Y-%m', created) AS month, julianday('2025-01-01') - julianday(created) AS age FROM projects

-- ## VALUES and TABLE

-- name: values_list
-- engines: postgres, mariadb, sqlite
-- expect: runs
VALUES (1, 'a'), (2, 'b')

-- name: table_statement
-- engines: postgres
-- expect: runs
TABLE projects

-- ## Syntax that was refused by mistake

-- name: mod_operator
-- engines: mariadb
-- expect: runs
SELECT 7 MOD 3, hours MOD 2 FROM tasks

-- name: interval_hour_minute
-- engines: mariadb
-- expect: runs
SELECT INTERVAL '1:30' HOUR_MINUTE + TIMESTAMP '2024-01-01 00:00:00'

-- name: date_add_hour_minute
-- engines: mariadb
-- expect: runs
SELECT DATE_ADD(created, INTERVAL '1:30' HOUR_MINUTE) FROM projects

-- name: extract_year_month
-- engines: mariadb
-- expect: runs
SELECT EXTRACT(YEAR_MONTH FROM created) FROM projects

-- name: cast_character_set
-- engines: mariadb
-- expect: runs
SELECT CAST(name AS CHAR(10) CHARACTER SET utf8mb4) FROM projects

-- name: column_named_trim
-- engines: mariadb, postgres, sqlite
-- expect: runs
SELECT trim FROM labels WHERE trim <> '' ORDER BY trim

-- name: is_not_string
-- engines: sqlite
-- expect: runs
SELECT name FROM projects WHERE status IS NOT 'done'

-- name: is_string
-- engines: sqlite
-- expect: runs
SELECT name FROM projects WHERE status IS 'done'

-- ## Strings that look like code

-- name: strings_with_code_postgres
-- engines: postgres
-- expect: runs
SELECT 'a;b -- c /* d */ e', 'it''s', E'back\\slash \' quote', $$dollar ' quote ; --$$, U&'\0041', 'C:\path' AS path

-- name: strings_with_code_mariadb
-- engines: mariadb
-- expect: runs
SELECT 'a;b -- c /* d */ e # f', 'it''s', 'back\\slash \' quote', "double \" quoted ; --", '/*! not code */'

-- name: strings_with_code_sqlite
-- engines: sqlite
-- expect: runs
SELECT 'a;b -- c /* d */ e', 'it''s', 'back\slash', "name" FROM (SELECT 1 AS name)

-- name: comments_everywhere
-- engines: postgres, mariadb, sqlite
-- expect: runs
/* leading */ SELECT name -- trailing ; DELETE FROM canary
FROM projects /* ; DELETE FROM canary */ WHERE id = 1

-- name: nested_comment_reads
-- engines: postgres
-- expect: runs
SELECT 1 /* outer /* inner ; */ still comment */ AS one

-- name: long_in_list
-- engines: postgres, mariadb, sqlite
-- expect: runs
SELECT COUNT(*) FROM tasks WHERE id IN (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40)

-- name: random_and_sequence_reads
-- engines: postgres
-- expect: runs
SELECT random() < 2 AS r, gen_random_uuid() IS NOT NULL AS u, clock_timestamp() IS NOT NULL AS t

-- name: randomblob_small
-- engines: sqlite
-- expect: runs
SELECT length(randomblob(16)), length(zeroblob(100))

-- name: catalog_reads
-- engines: postgres
-- expect: runs
SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' UNION ALL SELECT relname FROM pg_class WHERE relname = 'projects'

-- The tables, sequence, functions and operator the attacks and legitimate reads use, on PostgreSQL.
CREATE TABLE canary (id int PRIMARY KEY, v text NOT NULL);
INSERT INTO canary VALUES (1, 'a'), (2, 'b'), (3, 'c');
CREATE SEQUENCE canary_seq;
CREATE TABLE projects (id int PRIMARY KEY, name text NOT NULL, status text NOT NULL, created date NOT NULL, meta jsonb NOT NULL);
INSERT INTO projects VALUES
  (1, 'Apollo', 'active', '2024-01-15', '{"owner": "ada", "tags": ["x"]}'),
  (2, 'Borealis', 'done', '2024-03-02', '{"owner": "bob", "tags": []}'),
  (3, 'Cygnus', 'active', '2024-06-30', '{"owner": "ada", "tags": ["y", "z"]}');
CREATE TABLE tasks (id int PRIMARY KEY, project_id int NOT NULL REFERENCES projects (id), title text NOT NULL, hours numeric(6, 2) NOT NULL, done boolean NOT NULL);
INSERT INTO tasks VALUES (1, 1, 'plan', 3.5, true), (2, 1, 'build', 12, false), (3, 2, 'ship', 2, true), (4, 3, 'design', 5.25, false);
CREATE TABLE labels (id int PRIMARY KEY, trim text NOT NULL);
INSERT INTO labels VALUES (1, 'red'), (2, 'blue');
CREATE FUNCTION slow_total() RETURNS int LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(3); RETURN 1; END $$;
CREATE FUNCTION slow_row(canary) RETURNS int LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(3); RETURN 1; END $$;
CREATE FUNCTION slow_plus(int, int) RETURNS int LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(3); RETURN $1 + $2; END $$;
CREATE OPERATOR === (LEFTARG = int, RIGHTARG = int, FUNCTION = slow_plus);

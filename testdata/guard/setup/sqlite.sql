-- The tables the attacks and legitimate reads use, on SQLite.
CREATE TABLE canary (id integer PRIMARY KEY, v text NOT NULL);
INSERT INTO canary VALUES (1, 'a'), (2, 'b'), (3, 'c');
CREATE TABLE projects (id integer PRIMARY KEY, name text NOT NULL, status text NOT NULL, created text NOT NULL, meta text NOT NULL);
INSERT INTO projects VALUES
  (1, 'Apollo', 'active', '2024-01-15', '{"owner": "ada", "tags": ["x"]}'),
  (2, 'Borealis', 'done', '2024-03-02', '{"owner": "bob", "tags": []}'),
  (3, 'Cygnus', 'active', '2024-06-30', '{"owner": "ada", "tags": ["y", "z"]}');
CREATE TABLE tasks (id integer PRIMARY KEY, project_id integer NOT NULL, title text NOT NULL, hours real NOT NULL, done integer NOT NULL);
INSERT INTO tasks VALUES (1, 1, 'plan', 3.5, 1), (2, 1, 'build', 12, 0), (3, 2, 'ship', 2, 1), (4, 3, 'design', 5.25, 0);
CREATE TABLE labels (id integer PRIMARY KEY, trim text NOT NULL);
INSERT INTO labels VALUES (1, 'red'), (2, 'blue');

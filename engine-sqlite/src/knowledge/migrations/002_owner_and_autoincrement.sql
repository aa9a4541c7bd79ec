-- Ids are never reused (AUTOINCREMENT): a deleted document's id never names another.
-- The full-text index gets the agent as one token (`owner`), so that a search matches
-- the agent's documents first and ranks nothing else.
DROP TRIGGER documents_ai;
DROP TRIGGER documents_ad;
DROP TRIGGER documents_au;
DROP TABLE documents_fts;
ALTER TABLE documents RENAME TO documents_001;
CREATE TABLE documents (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    agent TEXT NOT NULL,
    filename TEXT NOT NULL,
    content TEXT NOT NULL,
    origin TEXT NOT NULL,
    -- The agent's name in hex behind a letter: one token whatever the name holds.
    owner TEXT GENERATED ALWAYS AS ('x' || hex(agent)) VIRTUAL,
    UNIQUE (agent, filename)
);
INSERT INTO documents (id, agent, filename, content, origin)
    SELECT id, agent, filename, content, origin FROM documents_001;
DROP TABLE documents_001;
CREATE VIRTUAL TABLE documents_fts
    USING fts5(filename, content, owner, content = 'documents', content_rowid = 'id');
INSERT INTO documents_fts (documents_fts) VALUES ('rebuild');
CREATE TRIGGER documents_ai AFTER INSERT ON documents BEGIN
    INSERT INTO documents_fts (rowid, filename, content, owner)
        VALUES (new.id, new.filename, new.content, new.owner);
END;
CREATE TRIGGER documents_ad AFTER DELETE ON documents BEGIN
    INSERT INTO documents_fts (documents_fts, rowid, filename, content, owner)
        VALUES ('delete', old.id, old.filename, old.content, old.owner);
END;
CREATE TRIGGER documents_au AFTER UPDATE ON documents BEGIN
    INSERT INTO documents_fts (documents_fts, rowid, filename, content, owner)
        VALUES ('delete', old.id, old.filename, old.content, old.owner);
    INSERT INTO documents_fts (rowid, filename, content, owner)
        VALUES (new.id, new.filename, new.content, new.owner);
END;

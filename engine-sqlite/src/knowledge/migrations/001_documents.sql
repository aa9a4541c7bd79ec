-- The first schema: documents, and their full-text index kept by triggers.
CREATE TABLE IF NOT EXISTS documents (
    id INTEGER PRIMARY KEY,
    agent TEXT NOT NULL,
    filename TEXT NOT NULL,
    content TEXT NOT NULL,
    origin TEXT NOT NULL,
    UNIQUE (agent, filename)
);
CREATE VIRTUAL TABLE IF NOT EXISTS documents_fts
    USING fts5(filename, content, content = 'documents', content_rowid = 'id');
CREATE TRIGGER IF NOT EXISTS documents_ai AFTER INSERT ON documents BEGIN
    INSERT INTO documents_fts (rowid, filename, content) VALUES (new.id, new.filename, new.content);
END;
CREATE TRIGGER IF NOT EXISTS documents_ad AFTER DELETE ON documents BEGIN
    INSERT INTO documents_fts (documents_fts, rowid, filename, content)
        VALUES ('delete', old.id, old.filename, old.content);
END;
CREATE TRIGGER IF NOT EXISTS documents_au AFTER UPDATE ON documents BEGIN
    INSERT INTO documents_fts (documents_fts, rowid, filename, content)
        VALUES ('delete', old.id, old.filename, old.content);
    INSERT INTO documents_fts (rowid, filename, content) VALUES (new.id, new.filename, new.content);
END;

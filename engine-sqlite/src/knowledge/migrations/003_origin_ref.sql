-- Who wrote a document is a kind (`plugin`, `operator`) and a reference (the plugin's
-- namespace, the operator's name): every document so far was a plugin's, and its
-- `origin` held the namespace.
ALTER TABLE documents ADD COLUMN origin_ref TEXT NOT NULL DEFAULT '';
UPDATE documents SET origin_ref = origin, origin = 'plugin';
